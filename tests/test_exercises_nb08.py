"""Exercises of notebook 08 (the residual connection): right answers pass, wrong ones get a hint."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from clonelab import check


@pytest.mark.parametrize("answer", [
    (7.0, -9.0), [7, -9], (np.float32(7.0), np.float64(-9.0)),
    (torch.tensor([7.0]), torch.tensor(-9.0)),
])
def test_08_1_right(answer, capsys):
    assert check("08.1", answer)


@pytest.mark.parametrize("answer", [
    (8.0, -4.0), (7.0, -4.0), (7.0, 9.0), (7.0, -3.0), (-9.0, 7.0), 7.0, (7.0,), ("7", "-9"),
    (True, -9.0),
])
def test_08_1_wrong(answer, capsys):
    assert not check("08.1", answer)
    out = capsys.readouterr().out
    assert "-9" not in out and " 7" not in out


def test_08_1_computed_answer(capsys):
    input_data = torch.tensor([1.0])
    w1 = torch.tensor([2.0], requires_grad=True)
    w2 = torch.tensor([3.0], requires_grad=True)
    out = input_data + w2 * (w1 * input_data)
    ((out - 8.5) ** 2).backward()
    assert check("08.1", (out.item(), w1.grad.item()))


def _out_of_place(x, w):
    return x + w * F.relu(x)


def _clone_then_inplace(x, w):
    h = x.clone()
    h.relu_()
    return x + w * h


def _clamp(x, w):
    return x + w * x.clamp(min=0)


def _where(x, w):
    return torch.where(x > 0, x * (1 + w), x)


def _module(x, w):
    return x + w * torch.nn.ReLU(inplace=False)(x)


@pytest.mark.parametrize("answer", [_out_of_place, _clone_then_inplace, _clamp, _where, _module])
def test_08_2_right(answer, capsys):
    assert check("08.2", answer)


def _alias_inplace(x, w):
    skip = x
    return skip + w * F.relu(x, inplace=True)


def _clone_inplace(x, w):
    skip = x.clone()
    return skip + w * F.relu(x, inplace=True)


def _no_relu(x, w):
    return x + w * x


def _detached(x, w):
    return x + w * F.relu(x).detach()


def _returns_number(x, w):
    return 1.0


@pytest.mark.parametrize("answer", [_alias_inplace, _clone_inplace, _no_relu, _detached, _returns_number, "f"])
def test_08_2_wrong(answer, capsys):
    assert not check("08.2", answer)
    out = capsys.readouterr().out
    assert "inplace=False" not in out


def test_08_2_clone_answer_hears_why(capsys):
    check("08.2", _clone_inplace)
    assert "clone" in capsys.readouterr().out


def test_08_2_leaves_the_global_rng_alone(capsys):
    torch.manual_seed(123)
    expected = torch.randn(3)
    torch.manual_seed(123)
    check("08.2", _out_of_place)
    assert torch.equal(torch.randn(3), expected)


RIGHT_08_3 = {"add": "silent", "exp": "backward error", "bn": "silent", "tanh": "backward error",
              "leaf": "immediate error", "mul": "silent"}


def test_08_3_right(capsys):
    assert check("08.3", RIGHT_08_3)
    assert check("08.3", {k: v.upper() + " " for k, v in RIGHT_08_3.items()})


@pytest.mark.parametrize("change", [
    {"exp": "silent"}, {"tanh": "silent"}, {"leaf": "backward error"}, {"add": "backward error"},
    {"bn": "immediate error"}, {"mul": "error"}, {"mul": None},
])
def test_08_3_wrong(change, capsys):
    assert not check("08.3", {**RIGHT_08_3, **change})


def test_08_3_wrong_shape(capsys):
    assert not check("08.3", {k: v for k, v in RIGHT_08_3.items() if k != "mul"})
    assert not check("08.3", list(RIGHT_08_3.values()))


def test_08_3_matches_what_pytorch_does():
    """The expected outcomes are what torch does, so a PyTorch change shows up here."""
    bn = torch.nn.BatchNorm2d(3)
    makers = {"add": lambda a, b: a + b, "exp": lambda a, b: torch.exp(a), "bn": lambda a, b: bn(a),
              "tanh": lambda a, b: torch.tanh(a), "leaf": lambda a, b: a, "mul": lambda a, b: a * b}
    for key, make in makers.items():
        a = torch.randn(2, 3, 4, 4, requires_grad=True)
        b = torch.randn(2, 3, 4, 4, requires_grad=True)
        x = make(a, b)
        try:
            identity = x
            x.relu_()
            (identity + x).sum().backward()
            outcome = "silent"
        except RuntimeError as err:
            outcome = "immediate error" if "leaf Variable" in str(err) else "backward error"
        assert outcome == RIGHT_08_3[key], key
