"""Notebook 02's exercises accept every right answer and reject wrong ones without giving them away."""

from __future__ import annotations

import pytest
import torch

from clonelab import check, shares_storage


@pytest.mark.parametrize("answer, ok", [
    ([1, 2, 3], True),
    ([1, 2], False),
    ([1, 2, 3, 4], False),
    ([3, 2, 1], False),
    ((1, 2, 3), False),
    ("[1, 2, 3]", False),
])
def test_02_1(answer, ok, capsys):
    assert bool(check("02.1", answer)) is ok
    out = capsys.readouterr().out
    if not ok:
        assert "Hint" in out and "[1, 2, 3]" not in out


def test_02_1_hints_name_the_misconception(capsys):
    check("02.1", [1, 2])
    assert "__iadd__" in capsys.readouterr().out
    check("02.1", [1, 2, 3, 4])
    assert "new list" in capsys.readouterr().out


def _same_storage_via_cdata(x, y):
    return x.untyped_storage()._cdata == y.untyped_storage()._cdata


def _same_storage_via_base(x, y):
    root_x = x if x._base is None else x._base
    root_y = y if y._base is None else y._base
    return root_x.untyped_storage().data_ptr() == root_y.untyped_storage().data_ptr()


def _same_storage_object_via_base(x, y):
    root_x = x if x._base is None else x._base
    root_y = y if y._base is None else y._base
    return root_x.untyped_storage() is root_y.untyped_storage()


@pytest.mark.parametrize("answer", [
    lambda x, y: x.untyped_storage() is y.untyped_storage(),
    lambda x, y: id(x.untyped_storage()) == id(y.untyped_storage()),
    shares_storage,
    _same_storage_via_cdata,
    _same_storage_object_via_base,
])
def test_02_2_accepts_every_storage_comparison(answer, capsys):
    assert check("02.2", answer)


def test_02_2_storage_pointers_really_are_zero_without_memory():
    """The premise of the exercise's edge cases, on this torch."""
    assert torch.empty(0).untyped_storage().data_ptr() == 0
    assert torch.empty(3, device="meta").untyped_storage().data_ptr() == 0


@pytest.mark.parametrize("answer", [
    lambda x, y: x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr(),
    _same_storage_via_base,
    lambda x, y: x.data_ptr() - x.storage_offset() * x.element_size()
    == y.data_ptr() - y.storage_offset() * y.element_size(),
])
def test_02_2_storage_pointers_fail_only_on_the_pointerless_cases(answer, capsys):
    assert not check("02.2", answer)
    out = capsys.readouterr().out
    assert "pointer 0" in out and "untyped_storage().data_ptr()" not in out


@pytest.mark.parametrize("answer, says", [
    (lambda x, y: x.data_ptr() == y.data_ptr(), "another data_ptr()"),
    (lambda x, y: x is y, "views"),
    (lambda x, y: id(x) == id(y), "views"),
    (lambda x, y: True, "clone"),
    (lambda x, y: bool(torch.equal(x, y)) if x.shape == y.shape and x.dtype == y.dtype else False, "Hint"),
    (lambda x, y: ..., "still returns ..."),
    (42, "must be a function"),
])
def test_02_2_rejects_wrong_comparisons(answer, says, capsys):
    assert not check("02.2", answer)
    out = capsys.readouterr().out
    assert says in out and "untyped_storage().data_ptr()" not in out


def _iadd(x, y):
    x += y


def _add_(x, y):
    x.add_(y)


def _copy(x, y):
    x.copy_(x + y)


def _index(x, y):
    x[:] = x + y


def _ellipsis_index(x, y):
    x[...] += y


def _out(x, y):
    torch.add(x, y, out=x)


def _iadd_and_return(x, y):
    x += y
    return x


@pytest.mark.parametrize("answer", [_iadd, _add_, _copy, _index, _ellipsis_index, _out, _iadd_and_return])
def test_02_3_accepts_every_in_place_add(answer):
    assert check("02.3", answer)


def _rebind(x, y):
    x = x + y  # noqa: F841  (the point: this changes nothing outside)


def _return_sum(x, y):
    return x + y


def _swap_storage(x, y):
    x.data = x + y


def _set(x, y):
    x.set_(x + y)


def _adds_into_y(x, y):
    y += x


def _doubles(x, y):
    x += 2 * y


@pytest.mark.parametrize("answer, says", [
    (_rebind, "only moves the local name"),
    (_return_sum, "only moves the local name"),
    (_swap_storage, "keep its memory"),
    (_set, "keep its memory"),
    (_adds_into_y, "leave y alone"),
    (_doubles, "x + y"),
    ("x += y", "must be a function"),
])
def test_02_3_rejects_wrong_answers(answer, says, capsys):
    assert not check("02.3", answer)
    assert says in capsys.readouterr().out
