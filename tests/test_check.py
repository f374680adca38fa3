"""check() itself: an answer left as handed out, an unknown id, an answer that breaks the check or cannot be read,
and the random state it leaves alone."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from clonelab import check
from clonelab.exercises import Exercise, Unreadable, Verdict, function
from clonelab.exercises._core import choices
from test_exercise_answers import by_version, out_of_place_seeded


def test_a_template_left_as_handed_out_is_not_yet_answered(capsys):
    def fixed(x):
        ...   # your code here

    def documented(x):
        """A docstring, then the template's body."""
        ...

    def returns_ellipsis(t):
        return ...   # your code here

    def passes(x):
        pass

    made_by_exec = {}
    exec("def fixed(x):\n    ...", made_by_exec)   # no source file to read: told by its instructions
    for template in [..., None, "...", {"a": ..., "b": 1}, (1, ...), [...], fixed, documented, returns_ellipsis,
                     passes, made_by_exec["fixed"]]:
        verdict = check("05.2", template)
        assert not verdict and isinstance(verdict, Verdict)
        assert verdict.message == "… 05.2: no answer yet. Replace each ... with your answer."
    assert "no answer yet" not in check("05.2", lambda x: ...).message   # a lambda is an answer, if a wrong one


def test_unknown_id_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown exercise_id 'nope'; known ids: "):
        check("nope", 1)
    with pytest.raises(TypeError, match="exercise_id must be a string"):
        check(1, 1)


def test_registering_an_id_twice_is_refused():
    from clonelab.exercises import register

    with pytest.raises(ValueError, match="registered twice"):
        register(Exercise("demo.1", hint="again", form="anything", parse=function, judge=lambda f: True))


def _patched(monkeypatch, exercise: Exercise) -> None:
    from clonelab.exercises import _core

    monkeypatch.setitem(_core._REGISTRY, exercise.id, exercise)


def test_an_answer_that_breaks_the_check_is_wrong_not_a_crash(monkeypatch):
    _patched(monkeypatch, Exercise("test.raises", hint="a number", form="a number", parse=lambda a: a,
                                   judge=lambda answer: answer + 1 == 5))   # a string answer raises TypeError here
    verdict = check("test.raises", "four")
    assert not verdict and verdict.message.startswith("✗ test.raises: not yet. Hint: a number (your answer raised "
                                                      "TypeError: ")


def test_an_unreadable_answer_is_told_the_form_or_what_is_wrong_with_it(monkeypatch):
    def parse(answer):
        raise Unreadable(answer)

    _patched(monkeypatch, Exercise("test.form", hint="unused", form="two ints", parse=parse, judge=bool))
    assert check("test.form", "").message.endswith("Hint: answer with two ints.")
    assert check("test.form", "is it the same storage?").message.endswith("Hint: is it the same storage?")
    assert check("test.form", "look at the strides").message.endswith("Hint: look at the strides.")


def test_a_wrong_set_answer_hears_what_is_wrong_not_how_much(monkeypatch):
    """No counts: "2 are missing" would turn the exercise into elimination."""
    _patched(monkeypatch, Exercise("test.set", hint="look again", form="letters", parse=choices("ABCDE"),
                                   truth=lambda: frozenset("ABC")))
    for answer, says in [("A", "something is missing"), ("ABCDE", "something in your set does not belong"),
                         ("AD", "something in your set does not belong and something is missing")]:
        assert check("test.set", answer).message == f"✗ test.set: not yet. Hint: {says}; look again."


def test_each_truth_runs_once_and_leaves_the_random_state_alone(monkeypatch):
    from clonelab.exercises import _core as exercises

    runs = []

    def truth():
        runs.append(torch.rand(()))   # draws from the global generator
        return 1

    _patched(monkeypatch, Exercise("test.once", hint="unused", form="an int", parse=int, truth=truth))
    monkeypatch.setattr(exercises, "_TRUTHS", {})
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    assert check("test.once", 1) and check("test.once", 1) and not check("test.once", 2)
    assert len(runs) == 1
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("exercise_id, answer", [("09.2", (0, 0)), ("08.1", lambda x, w: x + w * F.relu(x)),
                                                 ("09.1", by_version), ("10.2", out_of_place_seeded),
                                                 ("quiz.4", {"A"})])
def test_a_check_that_builds_random_weights_leaves_the_random_state_alone(exercise_id, answer, capsys):
    torch.manual_seed(123)
    expected = torch.randn(3)
    torch.manual_seed(123)
    check(exercise_id, answer)
    assert torch.equal(torch.randn(3), expected)
