"""Exercises of notebook 05: every right answer passes, wrong ones get a hint, none leak the answer."""

from __future__ import annotations

import pytest
import torch

from clonelab import check

RIGHT_OPS = {"relu", "sigmoid", "exp", "tanh"}


# --- 05.1: which ops break when their output is written in place -------------

@pytest.mark.parametrize("answer", [
    RIGHT_OPS,
    ["relu", "sigmoid", "exp", "tanh"],
    ("TANH", " exp", "Sigmoid", "relu"),
    frozenset(RIGHT_OPS),
    ["relu", "relu", "sigmoid", "exp", "tanh"],
])
def test_05_1_right(answer, capsys):
    assert check("05.1", answer)


@pytest.mark.parametrize("answer", [
    {"relu"},
    RIGHT_OPS | {"sin"},
    RIGHT_OPS | {"mul"},
    {"add", "clone"},
    set(),
    "relu sigmoid exp tanh",
    {"relu", "sigmoid", "exp", "tanh", "gelu"},
    [1, 2],
    4,
])
def test_05_1_wrong(answer, capsys):
    assert not check("05.1", answer)
    out = capsys.readouterr().out
    assert "Hint" in out
    for name in ("sigmoid", "tanh"):  # the hint never lists the answer
        assert f"'{name}'" not in out.split("listed names")[0]


# --- 05.2: fix the sigmoid-then-mul_ function --------------------------------

def fixed_out_of_place(x):
    y = x.sigmoid()
    y = y * 2
    return y.sum()


def fixed_clone_then_inplace(x):
    y = x.sigmoid().clone()
    y.mul_(2)
    return y.sum()


def fixed_functional(x):
    return (2 * torch.sigmoid(x)).sum()


def fixed_add(x):
    y = torch.sigmoid(x)
    return (y + y).sum()


@pytest.mark.parametrize("fn", [fixed_out_of_place, fixed_clone_then_inplace, fixed_functional, fixed_add])
def test_05_2_right(fn, capsys):
    assert check("05.2", fn)


def broken(x):
    y = x.sigmoid()
    y.mul_(2)
    return y.sum()


def via_data(x):
    y = x.sigmoid()
    y.data.mul_(2)
    return y.sum()


def wrong_value(x):
    return x.sigmoid().sum()


def detached(x):
    return (2 * torch.sigmoid(x.detach())).sum()


def not_summed(x):
    return 2 * x.sigmoid()


@pytest.mark.parametrize("fn, words", [
    (broken, "still raises"),
    (via_data, "gradient is wrong"),
    (wrong_value, "value"),
    (detached, "tracks back"),
    (not_summed, "one number"),
    (lambda x: None, "must return a tensor"),
    ("fixed", "function"),
])
def test_05_2_wrong(fn, words, capsys):
    assert not check("05.2", fn)
    out = capsys.readouterr().out
    assert words in out
    assert "* 2" not in out and "clone" not in out


# --- 05.3: an SGD step on a leaf ---------------------------------------------

def step_no_grad(w, lr):
    with torch.no_grad():
        w -= lr * w.grad


def step_sub_(w, lr):
    with torch.no_grad():
        w.sub_(w.grad, alpha=lr)


def step_detach(w, lr):
    w.detach().sub_(lr * w.grad)  # detach() shares memory and the version counter


def step_optimizer(w, lr):
    torch.optim.SGD([w], lr=lr).step()


def step_copy_(w, lr):
    with torch.no_grad():
        w.copy_(w - lr * w.grad)


@pytest.mark.parametrize("fn", [step_no_grad, step_sub_, step_detach, step_optimizer, step_copy_])
def test_05_3_right(fn, capsys):
    assert check("05.3", fn)


def step_data(w, lr):
    w.data.sub_(lr * w.grad)


def step_rebind(w, lr):
    w = w - lr * w.grad  # noqa: F841  (rebinding the local name changes nothing outside)


def step_tracked(w, lr):
    w -= lr * w.grad


def step_wrong_sign(w, lr):
    with torch.no_grad():
        w += lr * w.grad


def step_set_data(w, lr):
    w.data = w.data - lr * w.grad


def step_stub(w, lr):
    ...   # the notebook's empty stub, before the reader writes anything


@pytest.mark.parametrize("fn, words", [
    (step_data, "_version did not move"),
    (step_rebind, "did not change"),
    (step_stub, "no answer yet"),   # the template as handed out: a reminder, not a wrong answer
    (step_tracked, "leaf error"),
    (step_wrong_sign, "not to w - lr"),
    (step_set_data, "new memory"),
    (None, "function"),
])
def test_05_3_wrong(fn, words, capsys):
    assert not check("05.3", fn)
    out = capsys.readouterr().out
    assert words in out
    assert "no_grad()" not in out
