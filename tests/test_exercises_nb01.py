"""Notebook 01's exercises accept every right answer and reject wrong ones without giving them away."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from clonelab import check


def _via_numpy(t):
    return torch.from_numpy(t.detach().numpy().copy())


def _empty_then_copy(t):
    out = torch.empty_like(t, requires_grad=False)
    with torch.no_grad():
        out.copy_(t)
    return out


def _no_grad_clone(t):
    with torch.no_grad():
        return t.clone()


@pytest.mark.parametrize("answer", [
    lambda t: t.detach().clone(),
    lambda t: t.clone().detach(),
    _no_grad_clone,
    lambda t: torch.tensor(t.tolist(), dtype=t.dtype),
    lambda t: t.detach().contiguous().clone(),
    lambda t: torch.clone(t.detach()),
    _via_numpy,
    _empty_then_copy,
])
def test_01_1_accepts_every_independent_copy(answer, capsys):
    assert check("01.1", answer)
    assert "✓" in capsys.readouterr().out


def _mutates_input(t):
    with torch.no_grad():
        t.mul_(1)  # bumps the version counter
    return t.detach().clone()


@pytest.mark.parametrize("answer, says", [
    (lambda t: t, "very object"),
    (lambda t: t.detach(), "shares memory"),
    (lambda t: t.clone(), "autograd graph"),
    (lambda t: t.view_as(t), "shares memory"),
    (lambda t: t.detach().numpy().copy(), "not a tensor"),
    (lambda t: t.detach().clone().float(), "same values, shape and dtype"),
    (lambda t: torch.zeros_like(t.detach()), "same values"),
    (lambda t: t.detach().clone().reshape(-1), "same values, shape"),
    (_mutates_input, "changed its input"),
    (lambda t: ..., "still returns ..."),
    ("t.detach().clone()", "must be a function"),
])
def test_01_1_rejects_wrong_answers_with_a_hint(answer, says, capsys):
    assert not check("01.1", answer)
    out = capsys.readouterr().out
    assert says in out
    assert "detach().clone()" not in out  # the hint never spells out the solution


@pytest.mark.parametrize("answer", [
    [4.0, 6.0, 8.0], [4, 6, 8], (4, 6, 8), torch.tensor([4.0, 6.0, 8.0]),
    torch.tensor([4, 6, 8]), np.array([4.0, 6.0, 8.0]),
])
def test_01_2_accepts_the_gradient_in_any_form(answer):
    assert check("01.2", answer)


@pytest.mark.parametrize("answer, says", [
    ([8.0, 12.0, 16.0], "cuts a tensor out of the graph"),
    ([2.0, 3.0, 4.0], "both factors"),
    ([0.0, 0.0, 0.0], "does reach a"),
    ([1.0, 1.0, 1.0], "Hint"),
    ([4.0, 6.0], "three numbers"),
    ("four six eight", "Hint"),
])
def test_01_2_rejects_wrong_predictions(answer, says, capsys):
    assert not check("01.2", answer)
    out = capsys.readouterr().out
    assert says in out and "4" not in out.replace("01.2", "")
