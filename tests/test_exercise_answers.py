"""Every exercise against its right and wrong answers, in one table: the verdict, and a hint that does not give
the answer away."""

from __future__ import annotations

import ast
import re

import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from clonelab import BasicBlock, check, measure, resnet, shares_storage, watch_ops
from clonelab.exercises import exercise_ids
from clonelab.models import ReluFirstBlock
from conftest import ROOT

# --- answers that are functions ---------------------------------------------------------------------------


def _no_grad_clone(t):
    with torch.no_grad():
        return t.clone()


def _empty_then_copy(t):
    out = torch.empty_like(t, requires_grad=False)
    with torch.no_grad():
        out.copy_(t)
    return out


def _mutates_input(t):
    with torch.no_grad():
        t.mul_(1)  # bumps the version counter
    return t.detach().clone()


def _root(t):
    return t if t._base is None else t._base


def _iadd(x, y):
    x += y


def _add_(x, y):
    x.add_(y)


def _index(x, y):
    x[:] = x + y


def _ellipsis_index(x, y):
    x[...] += y


def _iadd_and_return(x, y):
    x += y
    return x


def _rebind(x, y):
    x = x + y  # noqa: F841  (the point: this changes nothing outside)


def _swap_storage(x, y):
    x.data = x + y


def _adds_into_y(x, y):
    y += x


def _doubles(x, y):
    x += 2 * y


def fixed_clone_then_inplace(x):
    y = x.sigmoid().clone()
    y.mul_(2)
    return y.sum()


def fixed_add(x):
    y = torch.sigmoid(x)
    return (y + y).sum()


def broken(x):
    y = x.sigmoid()
    y.mul_(2)
    return y.sum()


def via_data(x):
    y = x.sigmoid()
    y.data.mul_(2)
    return y.sum()


def _measured(t):
    with measure() as m:
        t.clone()
    return m.allocated


def _clone_then_inplace(x, w):
    h = x.clone()
    h.relu_()
    return x + w * h


def _clone_inplace(x, w):
    skip = x.clone()
    return skip + w * F.relu(x, inplace=True)


def by_version(block, x):
    before = x._version
    block(x)
    return x._version != before


def by_version_after_only(block, x):   # reads the counter after the call only: wrong for an x written before it
    block(x)
    return x._version > 0


def by_version_bool_tensor(block, x):
    before = x._version
    block(x)
    return torch.tensor(x._version > before)


def by_version_numpy(block, x):
    before = x._version
    block(x)
    return np.bool_(x._version > before)


def by_watching(block, x):
    with watch_ops(x=x) as log:
        block(x)
    return any(r.kind == "IN-PLACE" and r.target is not None and r.target.endswith("x") for r in log)


def by_watching_x_only(block, x):
    with watch_ops(x=x) as log:
        block(x)
    return any(r.kind == "IN-PLACE" and r.target == "x" for r in log)


def by_values(block, x):
    before = x.clone()
    block(x)
    return not torch.equal(before, x)


def by_data_ptr(block, x):
    before = x.data_ptr()
    block(x)
    return x.data_ptr() != before


def _relu_first(**kwargs):
    return lambda: resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=16, stem="small", **kwargs)


def out_of_place_seeded():
    torch.manual_seed(5)
    return _relu_first(inplace=False)()


def returns_none():   # builds the model but forgets to return it
    _relu_first(inplace=False)()


# --- the table: a case per answer, grouped by exercise ------------------------------------------------------

X_09_3 = 8 * 64 * 32 * 32 * 4
RIGHT_04_2 = {"B", "C", "D", "F", "G"}
RIGHT_05_1 = {"relu", "sigmoid", "exp", "tanh"}
RIGHT_08_3 = {"add": "silent", "exp": "backward error", "bn": "silent", "tanh": "backward error",
              "leaf": "immediate error", "mul": "silent"}
RIGHT_Q4 = {"x += 1", "x.add_(1)", "torch.add(x, 1, out=x)", "x[0] = 1", "F.relu(x, inplace=True)",
            "x.detach().zero_()"}
L01_1, L02_2, L04_2 = ("detach().clone()",), ("untyped_storage().data_ptr()",), ("BCDFG", "B, C, D")
L05_1, L05_2, L07_2, L07_3 = ("'sigmoid'", "'tanh'"), ("* 2", "clone"), ("nbytes", "element_size"), \
    ("1048576", "1,048,576")
L08_2, L09_3, L10_2 = ("inplace=False",), (str(X_09_3), f"{X_09_3:,}"), ("inplace=False",)
LQ2, LQ4 = ("[1.0, 1.0, 1.0]", "[1, 1, 1]"), ("'x.detach().zero_()'",)
LQ8, LQ9 = ("16", "14"), ("'B'", "'E'")
EXTRA, MISSING = "something in your set does not belong", "something is missing"   # a set answer's hints: no counts


def case(exercise_id: str, answer, accepted: bool, says: str | None = None, leaks: tuple[str, ...] = ()):
    """One row: ``answer`` to ``exercise_id`` is right or wrong; a wrong one's hint says ``says`` and none of
    ``leaks`` (parts of the right answer). Its id names the exercise, the verdict and the hint."""
    return pytest.param(exercise_id, answer, accepted, says, leaks,
                        id=f"{exercise_id} {'right' if accepted else 'wrong: ' + says}")


CASES = [
    # demo.1
    case("demo.1", 4, True), case("demo.1", 5, False, "2 + 2", ("4",)),
    # 01.1
    case("01.1", lambda t: t.detach().clone(), True), case("01.1", lambda t: t.clone().detach(), True),
    case("01.1", _no_grad_clone, True), case("01.1", lambda t: torch.tensor(t.tolist(), dtype=t.dtype), True),
    case("01.1", lambda t: torch.clone(t.detach()), True), case("01.1", _empty_then_copy, True),
    case("01.1", lambda t: torch.from_numpy(t.detach().numpy().copy()), True),
    case("01.1", lambda t: t, False, "very object", L01_1),
    case("01.1", lambda t: t.detach(), False, "shares memory", L01_1),
    case("01.1", lambda t: t.clone(), False, "autograd graph", L01_1),
    case("01.1", lambda t: t.view_as(t), False, "shares memory", L01_1),
    case("01.1", lambda t: t.detach().numpy().copy(), False, "should return a tensor", L01_1),
    case("01.1", lambda t: t.detach().clone().float(), False, "same values, shape and dtype", L01_1),
    case("01.1", lambda t: torch.zeros_like(t.detach()), False, "not a copy of t", L01_1),
    case("01.1", lambda t: t.detach().clone().reshape(-1), False, "for t of shape (3, 2) the result should have shape",
         L01_1),
    case("01.1", _mutates_input, False, "wrote into t", L01_1),
    case("01.1", lambda t: ..., False, "still returns ...", L01_1),
    case("01.1", "t.detach().clone()", False, "the function independent_copy", L01_1),
    # 01.2
    case("01.2", [4.0, 6.0, 8.0], True), case("01.2", (4, 6, 8), True), case("01.2", torch.tensor([4, 6, 8]), True),
    case("01.2", np.array([4.0, 6.0, 8.0]), True),
    case("01.2", [8.0, 12.0, 16.0], False, "cuts a tensor out of the graph", ("4",)),
    case("01.2", [2.0, 3.0, 4.0], False, "both factors", ("4",)),
    case("01.2", [0, 0, 0], False, "does reach a", ("4",)),
    case("01.2", [1.0, 1.0, 1.0], False, "follow each of b, c, d, e", ("4",)),
    case("01.2", [4.0, 6.0], False, "three numbers", ("4",)),
    case("01.2", "four six eight", False, "three numbers", ("4",)),
    case("01.2", {8.0, 6.0, 4.0}, False, "three numbers", ("4",)),   # a set has no order: refused where it matters
    # 02.1
    case("02.1", lambda x, y: x.untyped_storage() is y.untyped_storage(), True),
    case("02.1", lambda x, y: id(x.untyped_storage()) == id(y.untyped_storage()), True),
    case("02.1", shares_storage, True),
    case("02.1", lambda x, y: x.untyped_storage()._cdata == y.untyped_storage()._cdata, True),
    case("02.1", lambda x, y: _root(x).untyped_storage() is _root(y).untyped_storage(), True),
    case("02.1", lambda x, y: x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr(), False,
         "the data_ptr() of a tensor with no memory behind it, such as torch.empty(0)?", L02_2 + ("same storage",)),
    case("02.1", lambda x, y: _root(x).untyped_storage().data_ptr() == _root(y).untyped_storage().data_ptr(), False,
         "no memory behind it", L02_2 + ("same storage",)),
    case("02.1", lambda x, y: x.data_ptr() - x.storage_offset() * x.element_size()
         == y.data_ptr() - y.storage_offset() * y.element_size(), False, "no memory behind it", L02_2),
    case("02.1", lambda x, y: x.data_ptr() == y.data_ptr(), False, "another data_ptr()", L02_2),
    case("02.1", lambda x, y: x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr() != 0, False,
         "every data_ptr() on the meta device is 0", L02_2),
    case("02.1", lambda x, y: x is y, False, "views", L02_2),
    case("02.1", lambda x, y: id(x) == id(y), False, "views", L02_2),
    case("02.1", lambda x, y: True, False, "clone", L02_2),
    case("02.1", lambda x, y: ..., False, "still returns ...", L02_2),
    case("02.1", lambda x, y: x.shape == y.shape and x.dtype == y.dtype and bool(torch.equal(x, y)), False,
         "views", L02_2),
    case("02.1", 42, False, "the function same_storage", L02_2),
    # same_storage must say True or False, not a truthy or falsy stand-in
    *[case("02.1", fn, False, "True or False", L02_2) for fn in (lambda x, y: "yes" if x.untyped_storage() is
                                                                y.untyped_storage() else "", lambda x, y: 1)],
    # 02.2
    case("02.2", _iadd, True), case("02.2", _add_, True), case("02.2", _index, True),
    case("02.2", lambda x, y: x.copy_(x + y), True), case("02.2", _ellipsis_index, True),
    case("02.2", lambda x, y: torch.add(x, y, out=x), True), case("02.2", _iadd_and_return, True),
    case("02.2", _rebind, False, "only moves the local name"), case("02.2", lambda x, y: x + y, False, "only moves"),
    case("02.2", _swap_storage, False, "keep its memory"), case("02.2", lambda x, y: x.set_(x + y), False, "keep its"),
    case("02.2", _adds_into_y, False, "leave y alone"), case("02.2", _doubles, False, "x + y"),
    case("02.2", "x += y", False, "the function add_into"),
    # 03.1
    case("03.1", (1, 12, 4), True), case("03.1", [1, 12, 4], True), case("03.1", torch.Size([1, 12, 4]), True),
    case("03.1", (1.0, 12.0, 4.0), True), case("03.1", (12, 4, 1), False, "before permute", ("1, 12, 4", "(1, 12")),
    case("03.1", (6, 3, 1), False, "contiguous tensor of shape (4, 2, 3)", ("1, 12, 4", "(1, 12")),
    case("03.1", (4, 12, 1), False, "permute reorders", ("1, 12, 4",)), case("03.1", (1, 4, 12), False, "a stride"),
    case("03.1", (1, 12), False, "tuple of three ints"), case("03.1", "1, 12, 4", False, "tuple of three ints"),
    case("03.1", 4, False, "tuple of three ints"), case("03.1", (True, 12, 4), False, "tuple of three ints"),
    case("03.1", {12, 4, 1}, False, "a tuple of three ints"),
    # 03.2
    case("03.2", lambda x, j: x[:, j], True), case("03.2", lambda x, j: x.select(1, j), True),
    case("03.2", lambda x, j: x.t()[j], True), case("03.2", lambda x, j: x.narrow(1, j, 1).squeeze(1), True),
    case("03.2", lambda x, j: x.unbind(1)[j], True), case("03.2", lambda x, j: x[..., j], True),
    case("03.2", lambda x, j: x.transpose(0, 1)[j].view(-1), True),
    case("03.2", lambda x, j: x[:, j].clone(), False, "a view was possible"),
    case("03.2", lambda x, j: x[:, j] + 0, False, "a view was possible"),
    case("03.2", lambda x, j: x.t().contiguous()[j], False, "a view was possible"),
    case("03.2", lambda x, j: x[:, [j]], False, "should have shape"),
    case("03.2", lambda x, j: x[:, j:j + 1], False, "should have shape"),
    case("03.2", lambda x, j: x[j], False, "should have shape"),
    case("03.2", lambda x, j: x, False, "should have shape"),
    case("03.2", lambda x, j: None, False, "should return a tensor"), case("03.2", "x[:, j]", False, "the function"),
    # 04.1
    case("04.1", 2, True), case("04.1", 2.0, True), case("04.1", 1, False, "too few", ("2",)),
    case("04.1", 0, False, "too few", ("2",)), case("04.1", 3, False, "too many", ("2",)),
    case("04.1", 5, False, "too many", ("2",)), case("04.1", "2", False, "as an int"),
    case("04.1", True, False, "an int"),
    # 04.2
    case("04.2", "BCDFG", True), case("04.2", "bcdfg", True), case("04.2", "B, C, D, F, G", True),
    case("04.2", "GFDCB", True), case("04.2", RIGHT_04_2, True), case("04.2", sorted(RIGHT_04_2), True),
    case("04.2", ("b", "c", "d", "f", "g"), True), case("04.2", frozenset("BCDFG"), True),
    case("04.2", "ABCDFG", False, "moves the name", L04_2),
    case("04.2", "BCDFGH", False, "clone has its own memory", L04_2),
    case("04.2", "BCDEFG", False, "returns a new tensor", L04_2),
    case("04.2", "BCF", False, "shares x's memory", L04_2), case("04.2", "BCDF", False, "shares x's memory", L04_2),
    case("04.2", "CDFG", False, "augmented assignment", L04_2), case("04.2", "", False, "shares x's memory", L04_2),
    case("04.2", "BCDFGX", False, "'X' is not one of the options", ("BCDFG",)),
    case("04.2", 5, False, "letters from A to H", L04_2),
    case("04.2", ["B", 1], False, "not one of the options", ("BCDFG",)), case("04.2", "B C\nD F G", True),
    # 05.1
    case("05.1", RIGHT_05_1, True), case("05.1", ["relu", "sigmoid", "exp", "tanh"], True),
    case("05.1", ("TANH", " exp", "Sigmoid", "relu"), True), case("05.1", frozenset(RIGHT_05_1), True),
    case("05.1", ["relu", "relu", "sigmoid", "exp", "tanh"], True),
    case("05.1", {"relu"}, False, f"Hint: {MISSING}; an op breaks", L05_1),
    case("05.1", RIGHT_05_1 | {"sin"}, False, f"Hint: {EXTRA}; an op breaks", L05_1),
    case("05.1", RIGHT_05_1 | {"mul"}, False, EXTRA, L05_1),
    case("05.1", {"add", "clone"}, False, f"Hint: {EXTRA} and {MISSING}; an op breaks", L05_1),
    case("05.1", set(), False, MISSING, L05_1),
    case("05.1", "relu sigmoid exp tanh", False, "a set of op names", L05_1),
    case("05.1", RIGHT_05_1 | {"gelu"}, False, "'gelu' is not one of the options"),
    case("05.1", [1, 2], False, "is not one of the options", L05_1), case("05.1", 4, False, "a set of op names", L05_1),
    # 05.2
    case("05.2", lambda x: (x.sigmoid() * 2).sum(), True), case("05.2", fixed_clone_then_inplace, True),
    case("05.2", lambda x: (2 * torch.sigmoid(x)).sum(), True), case("05.2", fixed_add, True),
    case("05.2", broken, False, "still raises", L05_2), case("05.2", via_data, False, "gradient is wrong", L05_2),
    case("05.2", lambda x: x.sigmoid().sum(), False, "value", L05_2),
    case("05.2", lambda x: (2 * torch.sigmoid(x.detach())).sum(), False, "tracks back", L05_2),
    case("05.2", lambda x: 2 * x.sigmoid(), False, "one number", L05_2),
    case("05.2", lambda x: None, False, "should return a tensor, not NoneType", L05_2),
    case("05.2", "fixed", False, "function", L05_2),
    # 06.1
    case("06.1", lambda a, b: (a * b).sigmoid().sum(), True), case("06.1", lambda a, b: (a.sigmoid() * b).sum(), True),
    case("06.1", lambda a, b: torch.sigmoid(torch.mul(a, b)).sum(), True),
    case("06.1", lambda a, b: torch.sum(a * b.sigmoid()), True),
    case("06.1", lambda a, b: (a * b).sum(), False, "it lacks: SigmoidBackward0 x1"),
    case("06.1", lambda a, b: (a * b).sigmoid().mean(), False, "extra nodes: MeanBackward0 x1"),
    case("06.1", lambda a, b: (a * 2).sigmoid().sum(), False, "AccumulateGrad x1"),
    case("06.1", lambda a, b: (a * b).sigmoid().sum() + 0, False, "extra nodes: AddBackward0 x1"),
    case("06.1", lambda a, b: (a * b).detach().sigmoid().sum(), False, "no grad_fn"),
    case("06.1", lambda a, b: 1.0, False, "should return a tensor, not float"),
    case("06.1", "(a * b)", False, "the function make"),
    # 06.2
    case("06.2", "feature", True), case("06.2", " feature ", True),
    *[case("06.2", name, False, "follow the plain line", ("feature'", '"feature"'))
      for name in ["identity", "weight2", "weight1", "input_data", "feature2", "loss", "output_data"]],
    case("06.2", "x", False, "not one of the options"), case("06.2", 3, False, "not one of the options"),
    case("06.2", ["feature"], False, "not one of the options"),
    # 07.1
    case("07.1", lambda t: t.nbytes, True), case("07.1", lambda t: t.numel() * t.element_size(), True),
    case("07.1", lambda t: t.numel() * t.itemsize, True),
    case("07.1", lambda t: t.clone().untyped_storage().nbytes(), True), case("07.1", lambda t: float(t.nbytes), True),
    case("07.1", _measured, True), case("07.1", lambda t: t.untyped_storage().nbytes(), False, "view", L07_2),
    case("07.1", lambda t: t.contiguous().untyped_storage().nbytes(), False, "view", L07_2),
    case("07.1", lambda t: t.numel(), False, "counts elements", L07_2),
    case("07.1", lambda t: t.numel() * 4, False, "float32 only", L07_2 + ("laid out", "view")),
    case("07.1", lambda t: 0, False, "not the storage behind it", L07_2),
    case("07.1", lambda t: t.nbytes / 3, False, "whole number of bytes", L07_2),
    case("07.1", 42, False, "the function clone_cost", L07_2),
    # 07.2
    case("07.2", {"allocated": 1_048_576, "saved": 0}, True),
    case("07.2", {"allocated": np.int64(1_048_576), "saved": torch.tensor(0)}, True),
    case("07.2", {"allocated": 0, "saved": 0}, False, "two forward passes allocate", L07_3),
    case("07.2", {"allocated": 1_048_576, "saved": 1_048_576}, False, "the allocation is right", L07_3),
    case("07.2", {"allocated": 524_288, "saved": 0}, False, "torch.randn(4, 16, 64, 64)", L07_3),
    case("07.2", {"allocated": 1_048_576}, False, "exactly the keys", L07_3),
    case("07.2", {"allocated": "1048576", "saved": 0}, False, "whole number of bytes", L07_3),
    # 08.1
    case("08.1", lambda x, w: x + w * F.relu(x), True), case("08.1", _clone_then_inplace, True),
    case("08.1", lambda x, w: x + w * x.clamp(min=0), True),
    case("08.1", lambda x, w: torch.where(x > 0, x * (1 + w), x), True),
    case("08.1", lambda x, w: x + w * torch.nn.ReLU(inplace=False)(x), True),
    case("08.1", lambda x, w: x + w * F.relu(x, inplace=True), False, "backward raised", L08_2),
    case("08.1", _clone_inplace, False, "clone", L08_2),
    case("08.1", lambda x, w: x + w * x, False, "output is not", L08_2),
    case("08.1", lambda x, w: x + w * F.relu(x).detach(), False, "gradients are not", L08_2),
    case("08.1", lambda x, w: 1.0, False, "should return a tensor", L08_2),
    case("08.1", "f", False, "the function", L08_2),
    # 08.2
    case("08.2", RIGHT_08_3, True), case("08.2", {k: v.upper() + " " for k, v in RIGHT_08_3.items()}, True),
    *[case("08.2", {**RIGHT_08_3, **change}, False, "1 of the 6 is not right yet")
      for change in ({"exp": "silent"}, {"tanh": "silent"}, {"leaf": "backward error"}, {"add": "backward error"},
                     {"bn": "immediate error"})],
    case("08.2", {**RIGHT_08_3, "mul": "error"}, False, "is not one of the options"),
    case("08.2", {**RIGHT_08_3, "mul": None}, False, "is not one of the options"),
    case("08.2", {k: v for k, v in RIGHT_08_3.items() if k != "mul"}, False, "the keys should be exactly"),
    case("08.2", list(RIGHT_08_3.values()), False, "a dict with the keys"),
    # 09.1
    case("09.1", by_version, True), case("09.1", by_version_bool_tensor, True), case("09.1", by_watching, True),
    case("09.1", by_version_numpy, True), case("09.1", by_values, False, "values do not change", ("_version",)),
    case("09.1", by_data_ptr, False, "your function says", ("_version",)),
    case("09.1", by_watching_x_only, False, "view", ("_version",)),
    case("09.1", lambda block, x: False, False, "your function says", ("_version",)),
    case("09.1", by_version_after_only, False, "written into before the call", ("_version",)),
    case("09.1", lambda block, x: "no", False, "True or False", ("_version",)),
    case("09.1", "by_version", False, "the function", ("_version",)),
    # 09.2
    case("09.2", (0, X_09_3), True), case("09.2", [0, X_09_3], True),
    case("09.2", (np.int64(0), torch.tensor(X_09_3)), True),
    case("09.2", (X_09_3, X_09_3), False, "freed when the block returns", L09_3),
    case("09.2", (0, 0), False, "shortcut", L09_3),
    case("09.2", (X_09_3, 0), False, "freed when the block returns", L09_3),
    case("09.2", (0, X_09_3 // 4), False, "bytes, not elements", L09_3),
    case("09.2", (0, X_09_3 * 2), False, "one copy", L09_3), case("09.2", (0,), False, "tuple", L09_3),
    case("09.2", "0, 2097152", False, "tuple", L09_3), case("09.2", (0, "2097152"), False, "tuple", L09_3),
    # 10.1
    *[case("10.1", right, True) for right in ({"A", "B", "C", "E"}, ["e", "c", "b", "a"], ("A", "B", "C", "E"),
                                              "ABCE", "a, b, c, e", frozenset("ACEB"))],
    case("10.1", {"A", "B", "C", "D", "E"}, False, "compare the two runs' blocks", ("write into its input",)),
    case("10.1", {"A", "B", "C", "E", "F"}, False, "compare the two runs' setups", ("one run only",)),
    case("10.1", {"A", "B"}, False, MISSING), case("10.1", set(), False, MISSING),
    case("10.1", {"A", "B", "C", "E", "G"}, False, "not one of the options"),
    case("10.1", {"AB"}, False, "not one of the options"), case("10.1", 4, False, "set of letters"),
    # 10.2
    case("10.2", _relu_first(inplace=False), True), case("10.2", out_of_place_seeded, True),
    case("10.2", _relu_first(identity="clone", inplace=False), True),
    case("10.2", _relu_first(identity="clone"), False, "still wrote into the block input", L10_2),
    case("10.2", _relu_first(), False, "skip still sees relu(x)", L10_2),
    case("10.2", lambda: resnet(BasicBlock, [1, 1], in_channels=1, base_width=16, stem="small"), False,
         "notebook's network", L10_2),
    case("10.2", lambda: resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=24, stem="small", inplace=False),
         False, "notebook's network", L10_2),   # another width
    case("10.2", returns_none, False, "nn.Module", L10_2),
    case("10.2", _relu_first(inplace=False)(), False, "the function", L10_2),
    # quiz.1
    *[case("quiz.1", right, True) for right in ([1.0, 1.0, 1.0], [1, 1, 1], (1, 1, 1), torch.ones(3), np.ones(3),
                                                torch.ones(3, dtype=torch.int64))],
    *[case("quiz.1", wrong, False, says, LQ2) for wrong, says in [
        ([0, 0, 0], "y += 1 is not"), ([2, 2, 2], "ask of y = y * 2"), ([5, 2, 2], "y[0] = 5"),
        ([5, 1, 1], "y[0] = 5"), ([3, 3, 3], "follow which tensor"), ([1, 1], "three values"),
        ([1, 1, 1, 1], "three values"), ("111", "three values"), ([True, True, True], "three values"),
        (torch.ones(2, 2), "three values")]],
    # quiz.2
    case("quiz.2", RIGHT_Q4, True), case("quiz.2", list(RIGHT_Q4), True),
    case("quiz.2", {label.replace(" ", "") for label in RIGHT_Q4}, True),
    *[case("quiz.2", wrong, False, says, LQ4) for wrong, says in [
        (RIGHT_Q4 | {"x = x + 1"}, "does not belong"), (RIGHT_Q4 | {"x.clone().zero_()"}, "does not belong"),
        (RIGHT_Q4 | {"x.add(1)"}, "does not belong"), (RIGHT_Q4 - {"x.detach().zero_()"}, MISSING),
        (RIGHT_Q4 - {"torch.add(x, 1, out=x)"}, "missing"), (set(), MISSING), ({"x.mul_(2)"}, "not one of")]],
    # quiz.3
    *[case("quiz.3", right, True) for right in ((16.0, 14.0), [16, 14], (torch.tensor([16.0]), np.float32(14.0)))],
    *[case("quiz.3", wrong, False, says, LQ8) for wrong, says in [
        ((14.0, 16.0), "the order"), ((14.0, 14.0), "both versions"), ((16.0, 16.0), "both versions"),
        ((8.0, 8.0), "write down"), ((12.0, 14.0), "write down"), (16.0, "a tuple"), ((16.0,), "a tuple"),
        (("16", "14"), "a tuple")]],
    case("quiz.3", {14.0, 16.0}, False, "(output with", LQ8),
    # quiz.4
    *[case("quiz.4", right, True) for right in ({"B", "D", "E"}, ["b", "d", "e"], ("(B)", " d", "E"),
                                                ["B", "D", "E", "E"], "BDE")],
    *[case("quiz.4", wrong, False, says, LQ9) for wrong, says in [
        ({"B", "D"}, "ask of each line"), ({"B", "D", "E", "C"}, "does not belong"), ({"A", "B", "D", "E"}, "not belong"),
        ({"B"}, MISSING), (set(), MISSING), ({"F"}, "not one of"), ({2}, "not one of")]],
]


@pytest.mark.parametrize("exercise_id, answer, accepted, says, leaks", CASES)
def test_every_answer_gets_its_verdict_and_hint(exercise_id, answer, accepted, says, leaks, capsys):
    verdict = check(exercise_id, answer)
    out = capsys.readouterr().out
    assert bool(verdict) is accepted, out
    assert out.strip() == verdict.message
    if not accepted:
        assert out.startswith(f"✗ {exercise_id}: not yet. Hint: ") and says in out, out
        for leak in leaks:
            assert leak not in out.replace(exercise_id, ""), f"the hint gives away {leak!r}"


def test_the_table_covers_every_exercise_with_a_right_and_a_wrong_answer():
    for accepted in (True, False):
        assert {c.values[0] for c in CASES if c.values[2] is accepted} == set(exercise_ids())


def test_no_example_gives_away_part_of_the_answer():
    """The examples in "answer with ..." (after "e.g." or "such as") and in the notebooks' templates
    (``answer = ...   # e.g. ...``) are read as answers: none holds a right part."""
    from clonelab.exercises import _core

    examples = [(exercise_id, text) for exercise_id in exercise_ids()
                for text in re.findall(r"(?:e\.g\.|such as) (\S.*?)(?: or |$)", _core._REGISTRY[exercise_id].form)]
    for path in sorted((ROOT / "notebooks").glob("[01]*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if found := re.search(r"= \.\.\. +#[^\n]*e\.g\. ([^\n]+)\n(?:.*\n)*?check\(\"([\w.]+)\"", cell.source):
                examples.append((found[2], found[1]))
    checked = 0
    for exercise_id, text in examples:
        try:
            example = _core._REGISTRY[exercise_id].parse(ast.literal_eval(text))
        except (ValueError, SyntaxError):   # a description, such as "(a, b, c)" or "the result of graph_nodes(...)"
            continue
        truth, checked = _core._REGISTRY[exercise_id].truth(), checked + 1
        parts = (zip(example, truth) if isinstance(truth, tuple) else
                 ((example[k], truth[k]) for k in truth) if isinstance(truth, dict) else [(example, truth)])
        assert not (example & truth if isinstance(truth, frozenset) else any(a == b for a, b in parts)), \
            f"{exercise_id}: the example {text} gives away part of the answer"
    assert checked >= 11, checked   # every literal example there is today
