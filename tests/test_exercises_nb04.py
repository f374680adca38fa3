"""Exercises of notebook 04: every right answer passes, wrong ones get a hint."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from clonelab import check


def test_04_1_right():
    assert check("04.1", 2)


@pytest.mark.parametrize("answer", [0, 1, 3, 4, 5, "2", 2.0, True, None])
def test_04_1_wrong(answer):
    assert not check("04.1", answer)


def test_04_1_hints_do_not_reveal_the_number(capsys):
    for wrong in (1, 3):
        check("04.1", wrong)
    out = capsys.readouterr().out
    assert "2" not in out.replace("04.1", "")


@pytest.mark.parametrize("answer", [
    "BCDFG", "bcdfg", "B, C, D, F, G", "GFDCB", {"B", "C", "D", "F", "G"}, ["B", "C", "D", "F", "G"],
    ("b", "c", "d", "f", "g"), frozenset("BCDFG"),
])
def test_04_2_right(answer):
    assert check("04.2", answer)


@pytest.mark.parametrize("answer, says", [
    ("ABCDFG", "moves the name"),
    ("BCDFGH", "clone has its own memory"),
    ("BCDEFG", "returns a new tensor"),
    ("BCF", "shares x's memory"),
    ("BCDF", "shares x's memory"),
    ("CDFG", "augmented assignment"),
    ("", "shares x's memory"),
    ("BCDFGX", "letters from A to H"),
    (5, "letters from A to H"),
    (["B", 1], "letters from A to H"),
])
def test_04_2_wrong(answer, says, capsys):
    assert not check("04.2", answer)
    out = capsys.readouterr().out
    assert says in out
    assert "BCDFG" not in out and "B, C, D" not in out


def test_04_2_answer_is_computed_by_running_the_lines():
    from clonelab.exercises.nb04 import lines_that_write

    assert lines_that_write() == {"B", "C", "D", "F", "G"}


def test_04_2_line_texts_match_the_functions_and_the_notebook():
    """The text of each line does what its function does, and the notebook shows exactly these lines."""
    import nbformat

    from clonelab.exercises.nb04 import LINES
    from conftest import ROOT

    for letter, (text, line) in LINES.items():
        by_text = torch.tensor([[1.0, -2.0], [3.0, -4.0]])
        by_function = by_text.clone()
        namespace = {"torch": torch, "x": by_text}
        exec(text, namespace)  # our own fixed strings: checks that the text and the function agree
        line(by_function)
        assert torch.equal(by_text, by_function), letter
        assert by_text._version == by_function._version, letter
    nb = nbformat.read(ROOT / "notebooks" / "04_inplace_and_mutability.ipynb", as_version=4)
    task = next(c.source for c in nb.cells if c.cell_type == "markdown" and "Exercise 04.2" in c.source)
    for letter, (text, _) in LINES.items():
        assert f"| {letter} | `{text}` |" in task, letter


@pytest.mark.parametrize("answer", [
    torch.relu,
    F.relu,
    lambda x: x.relu(),
    lambda x: x.clamp(min=0),
    lambda x: x.clone().relu_(),
    lambda x: F.relu(x.clone(), inplace=True),
    lambda x: torch.where(x > 0, x, torch.zeros_like(x)),
    lambda x: torch.nn.ReLU()(x),
])
def test_04_3_right(answer):
    assert check("04.3", answer)


def _relu_then_restore(x):
    saved = x.clone()
    out = x.relu_().clone()
    x.copy_(saved)
    return out


@pytest.mark.parametrize("answer", [
    lambda x: x.relu_(),
    lambda x: F.relu(x, inplace=True),
    lambda x: torch.nn.ReLU(inplace=True)(x),
    lambda x: x.clamp_(min=0),
    _relu_then_restore,
    lambda x: x.abs(),
    lambda x: x,
    lambda x: None,
])
def test_04_3_wrong(answer):
    assert not check("04.3", answer)
