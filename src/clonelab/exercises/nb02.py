"""Exercises of notebook 02 (names, objects, storage).

>>> from clonelab import check
>>> bool(check("02.1", [1, 2]))
✗ 02.1: not yet. Hint: a list has __iadd__, so ys += [3] changes the list that both names share.
False
"""

from __future__ import annotations

from clonelab.exercises import exercise


@exercise("02.1", hint="work line by line: which lines change the shared list, and which make a new one?")
def _check_02_1(answer):
    if not isinstance(answer, list):
        return "give your prediction as a list, such as [1, 2]"
    xs = [1, 2]
    ys = xs
    ys += [3]
    ys = ys + [4]
    if answer == xs:
        return True
    if answer == [1, 2]:
        return "a list has __iadd__, so ys += [3] changes the list that both names share"
    if answer == ys:
        return "ys + [4] builds a new list and only the name ys moves to it"
    return False


def _storage_pairs():
    """(x, y, do they share storage?) pairs that separate storage from data_ptr and from identity."""
    import torch

    base = torch.arange(12.0)
    grid = base.view(3, 4)
    return [
        (base, base, True),
        (grid, grid.t(), True),               # another object, same data_ptr
        (base, base[3:], True),               # another data_ptr, same storage
        (base[:4], base[8:], True),           # disjoint parts of one storage
        (grid[:, 1], base, True),
        (base, base.view(torch.int32), True),  # another dtype, same bytes
        (base, base.clone(), False),
        (base, torch.arange(12.0), False),    # equal values, other memory
        (base[3:], base.clone()[3:], False),  # same offset, other storage
    ]


def _pointerless_pairs():
    """Pairs whose storages have no memory behind them: every storage pointer is 0 here."""
    import torch

    meta = torch.empty(3, device="meta")
    return [
        (torch.empty(0), torch.empty(0), False),           # two separate empty storages
        (torch.zeros(2, 0), torch.empty(0), False),
        (meta, meta[1:], True),                             # a view on the meta device
        (meta, torch.empty(3, device="meta"), False),       # two separate meta storages
    ]


@exercise("02.2", hint="compare the storages themselves, not where each tensor's first element is")
def _check_02_2(answer):
    if not callable(answer):
        return "answer must be a function same_storage(x, y) that returns True or False"
    for x, y, expected in _storage_pairs() + _pointerless_pairs():
        got = answer(x, y)
        if got is ...:
            return "your function still returns ...: replace it with your code"
        if bool(got) != expected:
            if not expected and x.untyped_storage().data_ptr() == 0 == y.untyped_storage().data_ptr():
                return ("right for ordinary tensors, but two separate storages with no memory behind them "
                        f"({'empty tensors' if x.device.type != 'meta' else 'meta tensors'}) both have "
                        "the storage pointer 0, so a pointer cannot tell them apart; ask whether x and y "
                        "hold the very same storage object")
            if expected and x is not y and x.data_ptr() != y.data_ptr():
                return ("a slice that starts later has another data_ptr() "
                        "but lives in the same storage")
            if expected:
                return "views (another tensor object, the same memory) share storage too"
            return "a clone, or a tensor made separately, has its own storage even when the values are equal"
    return True


def _add_cases():
    """(x, another tensor on x's storage, what that other tensor must hold afterwards) per case."""
    import torch

    plain = torch.arange(4.0)
    base = torch.zeros(6)
    strided = base[::2]                   # x is itself a view: the write must land in base
    y_plain = torch.arange(1.0, 5.0)
    y_strided = torch.tensor([1.0, 2.0, 3.0])
    return [
        (plain, y_plain, plain[1:], (plain + y_plain)[1:]),
        (strided, y_strided, base, torch.tensor([1.0, 0.0, 2.0, 0.0, 3.0, 0.0])),
    ]


@exercise("02.3", hint="inside the function, x = ... only moves the local name x; "
                       "write into the tensor that x names instead")
def _check_02_3(answer):
    import torch

    if not callable(answer):
        return "answer must be a function add_into(x, y)"
    for x, y, other, other_after in _add_cases():
        x_before, y_before = x.clone(), y.clone()
        storage = x.untyped_storage().data_ptr()
        answer(x, y)
        if not torch.equal(y, y_before):
            return "leave y alone: only x should change"
        if torch.equal(x, x_before):
            return ("after your function ran, x still holds its old values; "
                    "remember that x = ... inside a function only moves the local name x")
        if x.untyped_storage().data_ptr() != storage:
            return "x must keep its memory; write the new values into the tensor x already is"
        if not torch.equal(x, x_before + y):
            return "x should end up holding x + y"
        if not torch.equal(other, other_after):
            return "a view of the same memory does not see your write"
    return True
