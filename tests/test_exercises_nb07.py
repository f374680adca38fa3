"""Exercises of notebook 07 (measuring memory): right answers pass, wrong ones get a hint."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from clonelab import check, measure


@pytest.mark.parametrize("answer", [200, np.int64(200), torch.tensor(200), 200.0, torch.tensor(200.0)])
def test_07_1_right(answer, capsys):
    assert check("07.1", answer)


@pytest.mark.parametrize("answer", [100, 400, 800, 200.5, True, "200", None, torch.tensor(200.5)])
def test_07_1_wrong(answer, capsys):
    assert not check("07.1", answer)
    assert "200" not in capsys.readouterr().out.replace("07.1", "")


def test_07_1_the_measured_answer_is_right(capsys):
    x = torch.zeros(10, 10, dtype=torch.float16)
    with measure() as m:
        x.clone()
    assert check("07.1", m.allocated)


def _measured(t):
    with measure() as m:
        t.clone()
    return m.allocated


@pytest.mark.parametrize("answer", [
    lambda t: t.nbytes,
    lambda t: t.numel() * t.element_size(),
    lambda t: t.numel() * t.itemsize,
    lambda t: t.clone().untyped_storage().nbytes(),
    lambda t: float(t.nbytes),                    # a whole number, written as a float
    _measured,
])
def test_07_2_right(answer, capsys):
    assert check("07.2", answer)


@pytest.mark.parametrize("answer", [
    lambda t: t.untyped_storage().nbytes(),      # the whole storage, wrong for views
    lambda t: t.contiguous().untyped_storage().nbytes(),  # a contiguous view keeps its big storage
    lambda t: t.numel(),                          # elements, not bytes
    lambda t: t.numel() * 4,                      # assumes float32
    lambda t: 0,                                  # the alias's cost
    lambda t: t.nbytes / 3,                       # not a whole number of bytes
    42,                                           # not a function
])
def test_07_2_wrong(answer, capsys):
    assert not check("07.2", answer)
    out = capsys.readouterr().out
    assert "nbytes" not in out and "element_size" not in out


def test_07_2_float32_only_answer_gets_the_dtype_hint(capsys):
    check("07.2", lambda t: t.numel() * 4)
    out = capsys.readouterr().out
    assert "dtype" in out or "float64" in out
    assert "laid out" not in out and "view" not in out


def test_07_2_storage_answer_gets_the_view_hint(capsys):
    check("07.2", lambda t: t.untyped_storage().nbytes())
    assert "view" in capsys.readouterr().out


@pytest.mark.parametrize("answer", [
    {"allocated": 1_048_576, "saved": 0},
    {"allocated": np.int64(1_048_576), "saved": torch.tensor(0)},
])
def test_07_3_right(answer, capsys):
    assert check("07.3", answer)


@pytest.mark.parametrize("answer", [
    {"allocated": 0, "saved": 0},
    {"allocated": 1_048_576, "saved": 1_048_576},
    {"allocated": 524_288, "saved": 0},
    {"allocated": 2 * 1_048_576, "saved": 0},
    {"allocated": 1_048_576},
    {"allocated": "1048576", "saved": 0},
    (1_048_576, 0),
])
def test_07_3_wrong(answer, capsys):
    assert not check("07.3", answer)
    assert "1048576" not in capsys.readouterr().out.replace(",", "")


def test_07_3_the_notebooks_computation_is_right(capsys):
    from torch import nn

    from clonelab import saved_for_backward

    torch.manual_seed(0)
    conv = nn.Conv2d(16, 16, kernel_size=3, padding=1, bias=False)
    bn = nn.BatchNorm2d(16)

    def block(x, identity_mode):  # as in the notebook: the identity first, added in place at the end
        identity = x.clone() if identity_mode == "clone" else x
        out = bn(conv(x))
        out += identity
        return out

    x = torch.randn(4, 16, 64, 64)
    with measure() as a:
        block(x, "alias")
    with measure() as b:
        block(x, "clone")
    saved = saved_for_backward(block, x, "clone").nbytes - saved_for_backward(block, x, "alias").nbytes
    assert check("07.3", {"allocated": b.allocated - a.allocated, "saved": saved})
