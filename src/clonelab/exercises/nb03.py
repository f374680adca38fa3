"""Exercises of notebook 03 (views and copies)."""

from __future__ import annotations

import torch

from clonelab.exercises import exercise
from clonelab.inspection import shares_storage


@exercise("03.1", hint="a stride counts the storage elements you skip to move one step along a dimension; "
                       "permute reorders the dimensions, and each stride moves with its dimension")
def _check_03_1(answer):
    if isinstance(answer, torch.Tensor) or not hasattr(answer, "__len__"):
        return "give the strides as a tuple of three ints, like the one `t.stride()` returns"
    values = tuple(answer)
    if len(values) != 3 or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "give the strides as a tuple of three ints, like the one `t.stride()` returns"
    x = torch.zeros(2, 3, 4)
    if values == x.stride():
        return "those are the strides before permute; after permute, each stride follows its dimension"
    if values == torch.zeros(4, 2, 3).stride():
        return ("those are the strides of a new contiguous tensor of shape (4, 2, 3); permute copies nothing, "
                "so it reuses x's strides in the new order")
    return values == tuple(x.permute(2, 0, 1).stride())


def _column_inputs():
    base = torch.arange(20.0).view(4, 5)
    return [
        (base.clone(), 0),
        (base.clone(), 3),
        (base.clone().t(), 2),            # a non-contiguous input
        (torch.arange(6.0).view(2, 3), 2),
    ]


@exercise("03.2", hint="look for an indexing form or a method that only changes shape, stride and offset")
def _check_03_2(answer):
    if not callable(answer):
        return "answer should be a function column(x, j)"
    for x, j in _column_inputs():
        expected = x.clone()[:, j]
        got = answer(x, j)
        if not isinstance(got, torch.Tensor):
            return "column(x, j) should return a tensor"
        if tuple(got.shape) != tuple(expected.shape):
            return f"for x of shape {tuple(x.shape)} the column should have shape {tuple(expected.shape)}"
        if not torch.equal(got, expected):
            return "the values are not column j of x"
        if not shares_storage(got, x):
            return "the values are right, but the result owns new memory: it is a copy, not a view"
    return True


def _flat_inputs():
    x = torch.arange(12.0).view(3, 4)
    return [x, x.t(), torch.arange(24.0).view(2, 3, 4), torch.arange(24.0).view(2, 3, 4).permute(2, 0, 1)]


@exercise("03.3", hint="you need something that returns a view when the strides allow it "
                       "and copies only when they do not")
def _check_03_3(answer):
    if not callable(answer):
        return "answer should be a function flat(x)"
    for x in _flat_inputs():
        before = x.clone()
        expected = x.contiguous().view(-1)
        got = answer(x)
        if not isinstance(got, torch.Tensor):
            return "flat(x) should return a tensor"
        if not torch.equal(x, before):
            return "flat(x) changed x; it should only read it"
        if got.dim() != 1 or not torch.equal(got, expected):
            return "the result should be 1-D, with x's elements in row-major order"
        if x.is_contiguous() and not shares_storage(got, x):
            return "for a contiguous x the result copies, but a view was possible there"
    return True
