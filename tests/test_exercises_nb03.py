"""Exercises of notebook 03: every right answer passes, wrong ones get a hint."""

from __future__ import annotations

import pytest
import torch

from clonelab import check


@pytest.mark.parametrize("answer", [(1, 12, 4), [1, 12, 4], torch.Size([1, 12, 4]),
                                    torch.zeros(2, 3, 4).permute(2, 0, 1).stride()])
def test_03_1_right(answer):
    assert check("03.1", answer)


@pytest.mark.parametrize("answer", [(12, 4, 1), (4, 12, 1), (1, 4, 12), (1, 12), "1, 12, 4", 4, None,
                                    (1.0, 12.0, 4.0), (True, 12, 4), torch.tensor([1, 12, 4])])
def test_03_1_wrong(answer):
    assert not check("03.1", answer)


def test_03_1_hint_does_not_reveal_the_strides(capsys):
    check("03.1", (12, 4, 1))
    out = capsys.readouterr().out
    assert "1, 12, 4" not in out and "(1, 12" not in out


@pytest.mark.parametrize("answer", [
    lambda x, j: x[:, j],
    lambda x, j: x.select(1, j),
    lambda x, j: torch.select(x, 1, j),
    lambda x, j: x.t()[j],
    lambda x, j: x.narrow(1, j, 1).squeeze(1),
    lambda x, j: x.unbind(1)[j],
    lambda x, j: x[..., j],
    lambda x, j: x.transpose(0, 1)[j].view(-1),
])
def test_03_2_right(answer):
    assert check("03.2", answer)


@pytest.mark.parametrize("answer", [
    lambda x, j: x[:, j].clone(),
    lambda x, j: x.clone()[:, j],
    lambda x, j: x[:, [j]],
    lambda x, j: x[:, j:j + 1],
    lambda x, j: x[j],
    lambda x, j: x[:, j] + 0,
    lambda x, j: x.t().contiguous()[j],
    lambda x, j: x,
    lambda x, j: None,
    "x[:, j]",
])
def test_03_2_wrong(answer):
    assert not check("03.2", answer)


@pytest.mark.parametrize("answer", [
    lambda x: x.reshape(-1),
    lambda x: x.flatten(),
    torch.flatten,
    torch.ravel,
    lambda x: x.contiguous().view(-1),
    lambda x: torch.reshape(x, (x.numel(),)),
])
def test_03_3_right(answer):
    assert check("03.3", answer)


def _flatten_and_zero(x):
    out = x.reshape(-1)
    x.zero_()
    return out


@pytest.mark.parametrize("answer", [
    lambda x: x.view(-1),                 # fails on a non-contiguous x
    lambda x: x.clone().view(-1),         # copies even when a view was possible
    lambda x: x.flatten().clone(),
    lambda x: x.contiguous(),             # not 1-D
    lambda x: x.t().reshape(-1) if x.dim() == 2 else x.reshape(-1),  # wrong order
    lambda x: x.reshape(-1).sort().values,
    lambda x: torch.tensor(x.tolist()).view(-1),
    _flatten_and_zero,
    42,
])
def test_03_3_wrong(answer):
    assert not check("03.3", answer)


def test_03_1_contiguous_strides_of_the_new_shape_get_their_own_hint(capsys):
    assert not check("03.1", (6, 3, 1))
    out = capsys.readouterr().out
    assert "contiguous tensor of shape (4, 2, 3)" in out and "(1, 12, 4)" not in out
