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


def _iadd(out, identity):
    out += identity


def _iadd_return(out, identity):
    out += identity
    return out


def _slice_iadd(out, identity):
    out[:] += identity


@pytest.mark.parametrize("answer", [
    _iadd,
    _iadd_return,
    lambda out, identity: out.add_(identity),
    lambda out, identity: torch.add(out, identity, out=out),
    lambda out, identity: out.add_(identity, alpha=1),
    _slice_iadd,
])
def test_04_2_right(answer):
    assert check("04.2", answer)


def _rebind(out, identity):
    out = out + identity
    return out


def _slice_assign(out, identity):
    out[:] = out + identity


@pytest.mark.parametrize("answer", [
    _rebind,
    lambda out, identity: out + identity,
    lambda out, identity: out.copy_(out + identity),   # right values, but a temporary
    _slice_assign,
    lambda out, identity: out.sub_(identity),
    lambda out, identity: identity.add_(out),
    lambda out, identity: out.add_(identity).clone(),
    lambda out, identity: None,
    "out += identity",
])
def test_04_2_wrong(answer):
    assert not check("04.2", answer)


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
