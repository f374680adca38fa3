"""The exercise checker, and every registered exercise against its right and wrong answers."""

from __future__ import annotations

import pytest

from clonelab import check
from clonelab.exercises import Verdict, exercise_ids


def test_right_wrong_and_missing_answers(capsys):
    assert check("demo.1", 4)
    assert "✓" in capsys.readouterr().out
    verdict = check("demo.1", 5)
    assert not verdict and isinstance(verdict, Verdict)
    out = capsys.readouterr().out
    assert "Hint: 2 + 2" in out and "4" not in out.replace("demo.1", "")
    assert not check("demo.1", ...)
    assert "no answer yet" in capsys.readouterr().out
    for template in [{"a": ..., "b": 1}, (1, ...), [...]]:
        assert not check("demo.1", template)
        assert "no answer yet" in capsys.readouterr().out


def test_an_answer_that_breaks_the_validator_is_wrong_not_a_crash(capsys):
    from clonelab import exercises

    def breaks(answer):
        return answer + 1 == 5          # a string answer raises TypeError here

    exercises._REGISTRY["test.raises"] = (breaks, "a number")
    try:
        verdict = check("test.raises", "four")
    finally:
        del exercises._REGISTRY["test.raises"]
    assert not verdict and "your answer raised TypeError" in verdict.message


def test_unknown_id_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown exercise_id 'nope'; known ids: "):
        check("nope", 1)
    with pytest.raises(TypeError, match="exercise_id must be a string"):
        check(1, 1)


def test_registering_an_id_twice_is_refused():
    from clonelab import exercises

    with pytest.raises(ValueError, match="registered twice"):
        exercises.exercise("demo.1", hint="again")(lambda answer: True)   # noqa: the id exists already


def test_ids_are_named_by_notebook():
    ids = exercise_ids()
    for i in ids:
        assert i.split(".")[0] in {"demo", "quiz"} or i.split(".")[0].isdigit(), i


def test_a_hint_ends_with_one_full_stop_or_its_own_question_mark():
    from clonelab import exercises

    exercises._REGISTRY["test.q"] = (lambda a: "is it the same storage?", "unused")
    exercises._REGISTRY["test.s"] = (lambda a: "look at the strides", "unused")
    try:
        assert exercises.check("test.q", 1).message.endswith("Hint: is it the same storage?")
        assert exercises.check("test.s", 1).message.endswith("Hint: look at the strides.")
    finally:
        del exercises._REGISTRY["test.q"], exercises._REGISTRY["test.s"]


def test_a_function_left_as_the_template_is_not_yet_answered(capsys):
    """After Run All, a student copy's function exercises print a reminder, not a ✗ that looks like a mistake."""
    def safe_relu(x):
        ...   # your code here

    def documented(x):
        """A docstring, then the template's body."""
        ...

    def answered(x):
        return x.relu()

    for stub in (safe_relu, documented):
        verdict = check("04.3", stub)
        assert not verdict and "no answer yet" in verdict.message
    assert "no answer yet" not in check("04.3", answered).message
    assert "no answer yet" not in check("04.3", lambda x: ...).message   # a lambda is an answer, if a wrong one
