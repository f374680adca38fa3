"""Exercises of notebook 06: every right answer passes, wrong ones get a hint, none leak the answer."""

from __future__ import annotations

import pytest
import torch

from clonelab import check


# --- 06.1: build a graph from its node counts --------------------------------

@pytest.mark.parametrize("fn", [
    lambda a, b: (a * b).sigmoid().sum(),
    lambda a, b: (a.sigmoid() * b).sum(),
    lambda a, b: torch.sigmoid(torch.mul(a, b)).sum(),
    lambda a, b: (b * a.sigmoid()).sum(),
    lambda a, b: torch.sum(a * b.sigmoid()),
])
def test_06_1_right(fn, capsys):
    assert check("06.1", fn)


@pytest.mark.parametrize("fn, words", [
    (lambda a, b: (a * b).sum(), "it lacks: SigmoidBackward0 x1"),
    (lambda a, b: (a * b).sigmoid().mean(), "extra nodes: MeanBackward0 x1"),
    (lambda a, b: (a * 2).sigmoid().sum(), "AccumulateGrad x1"),       # b unused
    (lambda a, b: (a * b).sigmoid().sum() + 0, "extra nodes: AddBackward0 x1"),
    (lambda a, b: (a * b).detach().sigmoid().sum(), "no grad_fn"),
    (lambda a, b: 1.0, "must return a tensor"),
    ("(a * b).sigmoid().sum()", "function"),
])
def test_06_1_wrong(fn, words, capsys):
    assert not check("06.1", fn)
    assert words in capsys.readouterr().out


# --- 06.2: which tensor does the second mul save as `other` ------------------

@pytest.mark.parametrize("answer", ["feature", " feature "])
def test_06_2_right(answer, capsys):
    assert check("06.2", answer)


# in the clone variant, identity is a tensor of its own: the mul saved feature, not its clone
@pytest.mark.parametrize("answer", ["identity", "weight2", "weight1", "input_data", "feature2", "loss", "output_data"])
def test_06_2_wrong_field(answer, capsys):
    assert not check("06.2", answer)
    out = capsys.readouterr().out
    assert "Hint" in out and "feature'" not in out and '"feature"' not in out


@pytest.mark.parametrize("answer", ["x", "Feature", 3, None, ["feature"]])
def test_06_2_not_a_field(answer, capsys):
    assert not check("06.2", answer)


# --- 06.3: CloneBackward0 nodes in a block whose input needs no grad ---------

def test_06_3_right(capsys):
    assert check("06.3", 0)


@pytest.mark.parametrize("answer", [1, 2, -1, False, 0.0, "0", None])
def test_06_3_wrong(answer, capsys):
    assert not check("06.3", answer)
    assert "Hint" in capsys.readouterr().out


def test_06_3_leaves_the_global_rng_alone(capsys):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    check("06.3", 0)
    assert torch.equal(torch.rand(3), expected)
