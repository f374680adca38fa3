"""The exercise checks: every exercise against its right and wrong answers (one table), what check() does
with any answer, and the written-down or measured answers against what PyTorch does."""

from __future__ import annotations

import ast
import re
from collections import Counter

import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from clonelab import BasicBlock, SecondCodeBlock, check, measure, resnet, saved_by_node, shares_storage, watch_ops
from clonelab.exercises import Exercise, Unreadable, Verdict, exercise_ids, function, values
from clonelab.models import Bottleneck, PreActBlock, ReluFirstBlock, conv1x1
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


def _flatten_and_zero(x):
    out = x.reshape(-1)
    x.zero_()
    return out


def _relu_then_restore(x):
    saved = x.clone()
    out = x.relu_().clone()
    x.copy_(saved)
    return out


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


def step_no_grad(w, lr):
    with torch.no_grad():
        w -= lr * w.grad


def step_sub_(w, lr):
    with torch.no_grad():
        w.sub_(w.grad, alpha=lr)


def step_copy_(w, lr):
    with torch.no_grad():
        w.copy_(w - lr * w.grad)


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


# --- the table: (id, answer, accepted?, hint fragment, must not appear in the message) --------------------

X_09_3 = 8 * 64 * 32 * 32 * 4
RIGHT_09_1 = 29_704_192  # 3 x 6,422,528 + 2 x 3,211,264 + 2 x 1,605,632 + 802,816
HELD_11 = 4 * (64 * 8 * 8 + 128 * 4 * 4 + 256 * 2 * 2) * 4   # the inputs of layer2.0, layer3.0, layer4.0
RIGHT_04_2 = {"B", "C", "D", "F", "G"}
RIGHT_05_1 = {"relu", "sigmoid", "exp", "tanh"}
RIGHT_08_3 = {"add": "silent", "exp": "backward error", "bn": "silent", "tanh": "backward error",
              "leaf": "immediate error", "mul": "silent"}
RIGHT_Q3 = {"x[1]", "x[:, ::2]", "x.reshape(4, 3)", "x.detach()", "x.expand(2, 3, 4)"}
RIGHT_Q4 = {"x += 1", "x.add_(1)", "torch.add(x, 1, out=x)", "x[0] = 1", "F.relu(x, inplace=True)",
            "x.detach().zero_()"}
RIGHT_Q5 = {"y.data.mul_(2)": "wrong gradient", "y.detach().mul_(2)": "error", "y.mul_(2)": "error",
            "y = y * 2": "right gradient"}
L01_1, L02_2, L04_2 = ("detach().clone()",), ("untyped_storage().data_ptr()",), ("BCDFG", "B, C, D")
L05_1, L05_2, L05_3 = ("'sigmoid'", "'tanh'"), ("* 2", "clone"), ("no_grad()",)
L07_1, L07_2, L07_3 = ("200",), ("nbytes", "element_size"), ("1048576", "1,048,576")
L08_1, L08_2, L09_1 = ("-9", " 7"), ("inplace=False",), ("29704192", "29,704,192")
L09_3, L10_2 = (str(X_09_3), f"{X_09_3:,}"), ("inplace=False",)
LQ1, LQ2, LQ3, LQ4 = ("{'c', 'd'}", "{'d', 'c'}"), ("[1.0, 1.0, 1.0]", "[1, 1, 1]"), ("x.expand(2, 3, 4)'",), \
    ("'x.detach().zero_()'",)
LQ6, LQ7, LQ8, LQ9, LQ11 = ("CloneBackward0': 1",), ("40000", "40,000"), ("16", "14"), ("'B'", "'E'"), \
    (str(HELD_11), f"{HELD_11:,}")

CASES = [
    ("demo.1", 4, True, None, ()), ("demo.1", 5, False, "2 + 2", ("4",)),
    # 01.1: an independent copy
    ("01.1", lambda t: t.detach().clone(), True, None, ()), ("01.1", lambda t: t.clone().detach(), True, None, ()),
    ("01.1", _no_grad_clone, True, None, ()), ("01.1", lambda t: torch.tensor(t.tolist(), dtype=t.dtype), True, None, ()),
    ("01.1", lambda t: torch.clone(t.detach()), True, None, ()), ("01.1", _empty_then_copy, True, None, ()),
    ("01.1", lambda t: torch.from_numpy(t.detach().numpy().copy()), True, None, ()),
    ("01.1", lambda t: t, False, "very object", L01_1), ("01.1", lambda t: t.detach(), False, "shares memory", L01_1),
    ("01.1", lambda t: t.clone(), False, "autograd graph", L01_1),
    ("01.1", lambda t: t.view_as(t), False, "shares memory", L01_1),
    ("01.1", lambda t: t.detach().numpy().copy(), False, "should return a tensor", L01_1),
    ("01.1", lambda t: t.detach().clone().float(), False, "same values, shape and dtype", L01_1),
    ("01.1", lambda t: torch.zeros_like(t.detach()), False, "not a copy of x", L01_1),
    ("01.1", lambda t: t.detach().clone().reshape(-1), False, "should have shape (3, 2)", L01_1),
    ("01.1", _mutates_input, False, "wrote into x", L01_1),
    ("01.1", lambda t: ..., False, "still returns ...", L01_1),
    ("01.1", "t.detach().clone()", False, "the function independent_copy", L01_1),
    # 01.2: the gradient, in any form
    ("01.2", [4.0, 6.0, 8.0], True, None, ()), ("01.2", (4, 6, 8), True, None, ()),
    ("01.2", torch.tensor([4, 6, 8]), True, None, ()), ("01.2", np.array([4.0, 6.0, 8.0]), True, None, ()),
    ("01.2", [8.0, 12.0, 16.0], False, "cuts a tensor out of the graph", ("4",)),
    ("01.2", [2.0, 3.0, 4.0], False, "both factors", ("4",)), ("01.2", [0, 0, 0], False, "does reach a", ("4",)),
    ("01.2", [1.0, 1.0, 1.0], False, "follow each of b, c, d, e", ("4",)),
    ("01.2", [4.0, 6.0], False, "three numbers", ("4",)), ("01.2", "four six eight", False, "three numbers", ("4",)),
    # 02.1-02.3
    ("02.1", [1, 2, 3], True, None, ()), ("02.1", (1, 2, 3), True, None, ()),
    ("02.1", [1, 2], False, "__iadd__", ("[1, 2, 3]",)), ("02.1", [1, 2, 3, 4], False, "new list", ("[1, 2, 3]",)),
    ("02.1", [3, 2, 1], False, "work line by line", ("[1, 2, 3]",)),
    ("02.1", "[1, 2, 3]", False, "as a list", ("[1, 2, 3]",)),
    ("02.2", lambda x, y: x.untyped_storage() is y.untyped_storage(), True, None, ()),
    ("02.2", lambda x, y: id(x.untyped_storage()) == id(y.untyped_storage()), True, None, ()),
    ("02.2", shares_storage, True, None, ()),
    ("02.2", lambda x, y: x.untyped_storage()._cdata == y.untyped_storage()._cdata, True, None, ()),
    ("02.2", lambda x, y: _root(x).untyped_storage() is _root(y).untyped_storage(), True, None, ()),
    ("02.2", lambda x, y: x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr(), False, "pointer 0", L02_2),
    ("02.2", lambda x, y: _root(x).untyped_storage().data_ptr() == _root(y).untyped_storage().data_ptr(), False,
     "pointer 0", L02_2),
    ("02.2", lambda x, y: x.data_ptr() - x.storage_offset() * x.element_size()
     == y.data_ptr() - y.storage_offset() * y.element_size(), False, "pointer 0", L02_2),
    ("02.2", lambda x, y: x.data_ptr() == y.data_ptr(), False, "another data_ptr()", L02_2),
    ("02.2", lambda x, y: x is y, False, "views", L02_2), ("02.2", lambda x, y: id(x) == id(y), False, "views", L02_2),
    ("02.2", lambda x, y: True, False, "clone", L02_2), ("02.2", lambda x, y: ..., False, "still returns ...", L02_2),
    ("02.2", lambda x, y: x.shape == y.shape and x.dtype == y.dtype and bool(torch.equal(x, y)), False,
     "views", L02_2),
    ("02.2", 42, False, "the function same_storage", L02_2),
    ("02.3", _iadd, True, None, ()), ("02.3", _add_, True, None, ()), ("02.3", _index, True, None, ()),
    ("02.3", lambda x, y: x.copy_(x + y), True, None, ()), ("02.3", _ellipsis_index, True, None, ()),
    ("02.3", lambda x, y: torch.add(x, y, out=x), True, None, ()), ("02.3", _iadd_and_return, True, None, ()),
    ("02.3", _rebind, False, "only moves the local name", ()), ("02.3", lambda x, y: x + y, False, "only moves", ()),
    ("02.3", _swap_storage, False, "keep its memory", ()), ("02.3", lambda x, y: x.set_(x + y), False, "keep its", ()),
    ("02.3", _adds_into_y, False, "leave y alone", ()), ("02.3", _doubles, False, "x + y", ()),
    ("02.3", "x += y", False, "the function add_into", ()),
    # 03.1-03.3
    ("03.1", (1, 12, 4), True, None, ()), ("03.1", [1, 12, 4], True, None, ()),
    ("03.1", torch.Size([1, 12, 4]), True, None, ()), ("03.1", (1.0, 12.0, 4.0), True, None, ()),
    ("03.1", (12, 4, 1), False, "before permute", ("1, 12, 4", "(1, 12")),
    ("03.1", (6, 3, 1), False, "contiguous tensor of shape (4, 2, 3)", ("1, 12, 4", "(1, 12")),
    ("03.1", (4, 12, 1), False, "permute reorders", ("1, 12, 4",)), ("03.1", (1, 4, 12), False, "a stride", ()),
    ("03.1", (1, 12), False, "tuple of three ints", ()), ("03.1", "1, 12, 4", False, "tuple of three ints", ()),
    ("03.1", 4, False, "tuple of three ints", ()), ("03.1", (True, 12, 4), False, "tuple of three ints", ()),
    ("03.2", lambda x, j: x[:, j], True, None, ()), ("03.2", lambda x, j: x.select(1, j), True, None, ()),
    ("03.2", lambda x, j: x.t()[j], True, None, ()), ("03.2", lambda x, j: x.narrow(1, j, 1).squeeze(1), True, None, ()),
    ("03.2", lambda x, j: x.unbind(1)[j], True, None, ()), ("03.2", lambda x, j: x[..., j], True, None, ()),
    ("03.2", lambda x, j: x.transpose(0, 1)[j].view(-1), True, None, ()),
    ("03.2", lambda x, j: x[:, j].clone(), False, "a view was possible", ()),
    ("03.2", lambda x, j: x[:, j] + 0, False, "a view was possible", ()),
    ("03.2", lambda x, j: x.t().contiguous()[j], False, "a view was possible", ()),
    ("03.2", lambda x, j: x[:, [j]], False, "should have shape", ()),
    ("03.2", lambda x, j: x[:, j:j + 1], False, "should have shape", ()),
    ("03.2", lambda x, j: x[j], False, "should have shape", ()), ("03.2", lambda x, j: x, False, "should have shape", ()),
    ("03.2", lambda x, j: None, False, "should return a tensor", ()), ("03.2", "x[:, j]", False, "the function", ()),
    ("03.3", lambda x: x.reshape(-1), True, None, ()), ("03.3", lambda x: x.flatten(), True, None, ()),
    ("03.3", torch.flatten, True, None, ()), ("03.3", torch.ravel, True, None, ()),
    ("03.3", lambda x: x.contiguous().view(-1), True, None, ()),
    ("03.3", lambda x: x.view(-1), False, "view size is not compatible", ("reshape",)),
    ("03.3", lambda x: x.clone().view(-1), False, "a view was possible", ("reshape",)),
    ("03.3", lambda x: x.flatten().clone(), False, "a view was possible", ("reshape",)),
    ("03.3", lambda x: x.contiguous(), False, "should have shape", ()),
    ("03.3", lambda x: x.t().reshape(-1) if x.dim() == 2 else x.reshape(-1), False, "row-major order", ()),
    ("03.3", lambda x: x.reshape(-1).sort().values, False, "a view was possible", ()),
    ("03.3", lambda x: torch.tensor(x.tolist()).view(-1), False, "a view was possible", ()),
    ("03.3", _flatten_and_zero, False, "wrote into x", ()), ("03.3", 42, False, "the function flat", ()),
    # 04.1-04.3
    ("04.1", 2, True, None, ()), ("04.1", 2.0, True, None, ()),
    ("04.1", 1, False, "too few", ("2",)), ("04.1", 0, False, "too few", ("2",)), ("04.1", 3, False, "too many", ("2",)),
    ("04.1", 5, False, "too many", ("2",)), ("04.1", "2", False, "as an int", ()), ("04.1", True, False, "an int", ()),
    ("04.2", "BCDFG", True, None, ()), ("04.2", "bcdfg", True, None, ()), ("04.2", "B, C, D, F, G", True, None, ()),
    ("04.2", "GFDCB", True, None, ()), ("04.2", RIGHT_04_2, True, None, ()), ("04.2", sorted(RIGHT_04_2), True, None, ()),
    ("04.2", ("b", "c", "d", "f", "g"), True, None, ()), ("04.2", frozenset("BCDFG"), True, None, ()),
    ("04.2", "ABCDFG", False, "moves the name", L04_2), ("04.2", "BCDFGH", False, "clone has its own memory", L04_2),
    ("04.2", "BCDEFG", False, "returns a new tensor", L04_2), ("04.2", "BCF", False, "shares x's memory", L04_2),
    ("04.2", "BCDF", False, "shares x's memory", L04_2), ("04.2", "CDFG", False, "augmented assignment", L04_2),
    ("04.2", "", False, "shares x's memory", L04_2), ("04.2", "BCDFGX", False, "'X' is not one of the options", ("BCDFG",)),
    ("04.2", 5, False, "letters from A to H", L04_2), ("04.2", ["B", 1], False, "not one of the options", ("BCDFG",)),
    ("04.3", torch.relu, True, None, ()), ("04.3", F.relu, True, None, ()), ("04.3", lambda x: x.relu(), True, None, ()),
    ("04.3", lambda x: x.clamp(min=0), True, None, ()), ("04.3", lambda x: x.clone().relu_(), True, None, ()),
    ("04.3", lambda x: F.relu(x.clone(), inplace=True), True, None, ()),
    ("04.3", lambda x: torch.where(x > 0, x, torch.zeros_like(x)), True, None, ()),
    ("04.3", lambda x: torch.nn.ReLU()(x), True, None, ()),
    ("04.3", lambda x: x.relu_(), False, "wrote into x", ()),
    ("04.3", lambda x: F.relu(x, inplace=True), False, "wrote into x", ()),
    ("04.3", lambda x: torch.nn.ReLU(inplace=True)(x), False, "wrote into x", ()),
    ("04.3", lambda x: x.clamp_(min=0), False, "wrote into x", ()),
    ("04.3", _relu_then_restore, False, "version counter", ()), ("04.3", lambda x: x.abs(), False, "the result is not relu(x)", ()),
    ("04.3", lambda x: x, False, "not relu(x)", ()), ("04.3", lambda x: None, False, "should return a tensor", ()),
    # 05.1-05.3
    ("05.1", RIGHT_05_1, True, None, ()), ("05.1", ["relu", "sigmoid", "exp", "tanh"], True, None, ()),
    ("05.1", ("TANH", " exp", "Sigmoid", "relu"), True, None, ()), ("05.1", frozenset(RIGHT_05_1), True, None, ()),
    ("05.1", ["relu", "relu", "sigmoid", "exp", "tanh"], True, None, ()),
    ("05.1", {"relu"}, False, "3 are missing", L05_1), ("05.1", RIGHT_05_1 | {"sin"}, False, "does not belong", L05_1),
    ("05.1", RIGHT_05_1 | {"mul"}, False, "1 of your choices does not belong", L05_1),
    ("05.1", {"add", "clone"}, False, "2 of your choices do not belong and 4 are missing", L05_1),
    ("05.1", set(), False, "4 are missing", L05_1), ("05.1", "relu sigmoid exp tanh", False, "a set of op names", L05_1),
    ("05.1", RIGHT_05_1 | {"gelu"}, False, "'gelu' is not one of the options", ()),
    ("05.1", [1, 2], False, "is not one of the options", L05_1), ("05.1", 4, False, "a set of op names", L05_1),
    ("05.2", lambda x: (x.sigmoid() * 2).sum(), True, None, ()), ("05.2", fixed_clone_then_inplace, True, None, ()),
    ("05.2", lambda x: (2 * torch.sigmoid(x)).sum(), True, None, ()), ("05.2", fixed_add, True, None, ()),
    ("05.2", broken, False, "still raises", L05_2), ("05.2", via_data, False, "gradient is wrong", L05_2),
    ("05.2", lambda x: x.sigmoid().sum(), False, "value", L05_2),
    ("05.2", lambda x: (2 * torch.sigmoid(x.detach())).sum(), False, "tracks back", L05_2),
    ("05.2", lambda x: 2 * x.sigmoid(), False, "one number", L05_2),
    ("05.2", lambda x: None, False, "should return a tensor, not NoneType", L05_2), ("05.2", "fixed", False, "function", L05_2),
    ("05.3", step_no_grad, True, None, ()), ("05.3", step_sub_, True, None, ()),
    ("05.3", lambda w, lr: w.detach().sub_(lr * w.grad), True, None, ()),   # detach() shares memory and version
    ("05.3", lambda w, lr: torch.optim.SGD([w], lr=lr).step(), True, None, ()), ("05.3", step_copy_, True, None, ()),
    ("05.3", step_data, False, "_version did not move", L05_3), ("05.3", step_rebind, False, "did not change", L05_3),
    ("05.3", step_tracked, False, "leaf error", L05_3), ("05.3", step_wrong_sign, False, "not to w - lr", L05_3),
    ("05.3", step_set_data, False, "new memory", L05_3), ("05.3", 0.1, False, "the function step", L05_3),
    # 06.1-06.3
    ("06.1", lambda a, b: (a * b).sigmoid().sum(), True, None, ()),
    ("06.1", lambda a, b: (a.sigmoid() * b).sum(), True, None, ()),
    ("06.1", lambda a, b: torch.sigmoid(torch.mul(a, b)).sum(), True, None, ()),
    ("06.1", lambda a, b: torch.sum(a * b.sigmoid()), True, None, ()),
    ("06.1", lambda a, b: (a * b).sum(), False, "it lacks: SigmoidBackward0 x1", ()),
    ("06.1", lambda a, b: (a * b).sigmoid().mean(), False, "extra nodes: MeanBackward0 x1", ()),
    ("06.1", lambda a, b: (a * 2).sigmoid().sum(), False, "AccumulateGrad x1", ()),
    ("06.1", lambda a, b: (a * b).sigmoid().sum() + 0, False, "extra nodes: AddBackward0 x1", ()),
    ("06.1", lambda a, b: (a * b).detach().sigmoid().sum(), False, "no grad_fn", ()),
    ("06.1", lambda a, b: 1.0, False, "should return a tensor, not float", ()), ("06.1", "(a * b)", False, "the function make", ()),
    ("06.2", "feature", True, None, ()), ("06.2", " feature ", True, None, ()),
    *[("06.2", name, False, "follow the plain line", ("feature'", '"feature"'))
      for name in ["identity", "weight2", "weight1", "input_data", "feature2", "loss", "output_data"]],
    ("06.2", "x", False, "not one of the options", ()), ("06.2", 3, False, "not one of the options", ()),
    ("06.2", ["feature"], False, "not one of the options", ()),
    ("06.3", 0, True, None, ()), ("06.3", 0.0, True, None, ()),
    *[("06.3", wrong, False, "a node is recorded only", ()) for wrong in (1, 2, -1)],
    ("06.3", False, False, "whole number", ()), ("06.3", "0", False, "whole number", ()),
    # 07.1-07.3
    *[("07.1", right, True, None, ()) for right in (200, np.int64(200), torch.tensor(200), 200.0, torch.tensor(200.0))],
    ("07.1", 100, False, "number of elements", L07_1), ("07.1", 400, False, "float32", L07_1),
    ("07.1", 800, False, "m.allocated", L07_1), ("07.1", 200.5, False, "whole number", L07_1),
    ("07.1", True, False, "whole number", L07_1), ("07.1", "200", False, "whole number", L07_1),
    ("07.2", lambda t: t.nbytes, True, None, ()), ("07.2", lambda t: t.numel() * t.element_size(), True, None, ()),
    ("07.2", lambda t: t.numel() * t.itemsize, True, None, ()),
    ("07.2", lambda t: t.clone().untyped_storage().nbytes(), True, None, ()),
    ("07.2", lambda t: float(t.nbytes), True, None, ()), ("07.2", _measured, True, None, ()),
    ("07.2", lambda t: t.untyped_storage().nbytes(), False, "view", L07_2),
    ("07.2", lambda t: t.contiguous().untyped_storage().nbytes(), False, "view", L07_2),
    ("07.2", lambda t: t.numel(), False, "counts elements", L07_2),
    ("07.2", lambda t: t.numel() * 4, False, "float32 only", L07_2 + ("laid out", "view")),
    ("07.2", lambda t: 0, False, "count the elements", L07_2),
    ("07.2", lambda t: t.nbytes / 3, False, "whole number of bytes", L07_2),
    ("07.2", 42, False, "the function clone_cost", L07_2),
    ("07.3", {"allocated": 1_048_576, "saved": 0}, True, None, ()),
    ("07.3", {"allocated": np.int64(1_048_576), "saved": torch.tensor(0)}, True, None, ()),
    ("07.3", {"allocated": 0, "saved": 0}, False, "two forward passes allocate", L07_3),
    ("07.3", {"allocated": 1_048_576, "saved": 1_048_576}, False, "the allocation is right", L07_3),
    ("07.3", {"allocated": 524_288, "saved": 0}, False, "torch.randn(4, 16, 64, 64)", L07_3),
    ("07.3", {"allocated": 1_048_576}, False, "exactly the keys", L07_3),
    ("07.3", {"allocated": "1048576", "saved": 0}, False, "whole number of bytes", L07_3),
    # 08.1-08.3
    ("08.1", (7.0, -9.0), True, None, ()), ("08.1", [7, -9], True, None, ()),
    ("08.1", (np.float32(7.0), np.float64(-9.0)), True, None, ()),
    ("08.1", (torch.tensor([7.0]), torch.tensor(-9.0)), True, None, ()),
    ("08.1", (8.0, -4.0), False, "output of the post's model", L08_1),
    ("08.1", (7.0, -4.0), False, "post's gradient", L08_1), ("08.1", (7.0, 9.0), False, "recompute", L08_1),
    ("08.1", (-9.0, 7.0), False, "the order is (output, weight1_grad)", L08_1),
    ("08.1", (-3.0, 7.0), False, "the skip now adds the input", L08_1), ("08.1", 7.0, False, "a tuple", L08_1),
    ("08.1", (7.0,), False, "a tuple", L08_1), ("08.1", ("7", "-9"), False, "a tuple", L08_1),
    ("08.1", (True, -9.0), False, "a tuple", L08_1),
    ("08.2", lambda x, w: x + w * F.relu(x), True, None, ()), ("08.2", _clone_then_inplace, True, None, ()),
    ("08.2", lambda x, w: x + w * x.clamp(min=0), True, None, ()),
    ("08.2", lambda x, w: torch.where(x > 0, x * (1 + w), x), True, None, ()),
    ("08.2", lambda x, w: x + w * torch.nn.ReLU(inplace=False)(x), True, None, ()),
    ("08.2", lambda x, w: x + w * F.relu(x, inplace=True), False, "backward raised", L08_2),
    ("08.2", _clone_inplace, False, "clone", L08_2), ("08.2", lambda x, w: x + w * x, False, "output is not", L08_2),
    ("08.2", lambda x, w: x + w * F.relu(x).detach(), False, "gradients are not", L08_2),
    ("08.2", lambda x, w: 1.0, False, "should return a tensor", L08_2), ("08.2", "f", False, "the function", L08_2),
    ("08.3", RIGHT_08_3, True, None, ()), ("08.3", {k: v.upper() + " " for k, v in RIGHT_08_3.items()}, True, None, ()),
    *[("08.3", {**RIGHT_08_3, **change}, False, "1 of the 6 is not right yet", ())
      for change in ({"exp": "silent"}, {"tanh": "silent"}, {"leaf": "backward error"}, {"add": "backward error"},
                     {"bn": "immediate error"})],
    ("08.3", {**RIGHT_08_3, "mul": "error"}, False, "is not one of the options", ()),
    ("08.3", {**RIGHT_08_3, "mul": None}, False, "is not one of the options", ()),
    ("08.3", {k: v for k, v in RIGHT_08_3.items() if k != "mul"}, False, "the keys should be exactly", ()),
    ("08.3", list(RIGHT_08_3.values()), False, "a dict with the keys", ()),
    # 09.1-09.3
    *[("09.1", right, True, None, ()) for right in (RIGHT_09_1, np.int64(RIGHT_09_1), float(RIGHT_09_1),
                                                    torch.tensor(RIGHT_09_1))],
    ("09.1", RIGHT_09_1 // 4, False, "elements", L09_1), ("09.1", 6_422_528, False, "one block", L09_1),
    ("09.1", 12_042_240, False, "peak", L09_1), ("09.1", 8 * 3 * 224 * 224 * 4 * 8, False, "images", L09_1),
    ("09.1", RIGHT_09_1 + 1, False, "add up the bytes", L09_1), ("09.1", "29704192", False, "whole number", L09_1),
    ("09.1", True, False, "whole number", L09_1), ("09.1", RIGHT_09_1 + 0.5, False, "whole number", L09_1),
    ("09.2", by_version, True, None, ()), ("09.2", by_version_bool_tensor, True, None, ()),
    ("09.2", by_watching, True, None, ()), ("09.2", by_version_numpy, True, None, ()),
    ("09.2", by_values, False, "values do not change", ("_version",)),
    ("09.2", by_data_ptr, False, "your function says", ("_version",)),
    ("09.2", by_watching_x_only, False, "view", ("_version",)),
    ("09.2", lambda block, x: False, False, "your function says", ("_version",)),
    ("09.2", by_version_after_only, False, "written into before the call", ("_version",)),
    ("09.2", lambda block, x: "no", False, "True or False", ("_version",)),
    ("09.2", "by_version", False, "the function", ("_version",)),
    ("09.3", (0, X_09_3), True, None, ()), ("09.3", [0, X_09_3], True, None, ()),
    ("09.3", (np.int64(0), torch.tensor(X_09_3)), True, None, ()),
    ("09.3", (X_09_3, X_09_3), False, "freed when the block returns", L09_3), ("09.3", (0, 0), False, "shortcut", L09_3),
    ("09.3", (X_09_3, 0), False, "freed when the block returns", L09_3),
    ("09.3", (0, X_09_3 // 4), False, "bytes, not elements", L09_3), ("09.3", (0, X_09_3 * 2), False, "one copy", L09_3),
    ("09.3", (0,), False, "tuple", L09_3), ("09.3", "0, 2097152", False, "tuple", L09_3),
    ("09.3", (0, "2097152"), False, "tuple", L09_3),
    # 10.1, 10.2
    *[("10.1", right, True, None, ()) for right in ({"A", "B", "C", "E"}, ["e", "c", "b", "a"], ("A", "B", "C", "E"),
                                                    "ABCE", "a, b, c, e", frozenset("ACEB"))],
    ("10.1", {"A", "B", "C", "D", "E"}, False, "write into its input", ()),
    ("10.1", {"A", "B", "C", "E", "F"}, False, "one run only", ()), ("10.1", {"A", "B"}, False, "2 are missing", ()),
    ("10.1", set(), False, "4 are missing", ()), ("10.1", {"A", "B", "C", "E", "G"}, False, "not one of the options", ()),
    ("10.1", {"AB"}, False, "not one of the options", ()), ("10.1", 4, False, "set of letters", ()),
    ("10.2", _relu_first(inplace=False), True, None, ()), ("10.2", out_of_place_seeded, True, None, ()),
    ("10.2", _relu_first(identity="clone", inplace=False), True, None, ()),
    ("10.2", _relu_first(identity="clone"), False, "still wrote into the block input", L10_2),
    ("10.2", _relu_first(), False, "skip still sees relu(x)", L10_2),
    ("10.2", lambda: resnet(BasicBlock, [1, 1], in_channels=1, base_width=16, stem="small"), False,
     "notebook's network", L10_2),
    ("10.2", lambda: resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=24, stem="small", inplace=False),
     False, "notebook's network", L10_2),   # another width
    ("10.2", returns_none, False, "nn.Module", L10_2), ("10.2", _relu_first(inplace=False)(), False, "the function", L10_2),
    # the quiz
    *[("quiz.1", right, True, None, ()) for right in ({"c", "d"}, ["d", "c"], (" c", "d "), frozenset("cd"), "cd")],
    *[("quiz.1", wrong, False, says, LQ1) for wrong, says in [({"b", "c", "d"}, "does not belong"), ({"c"}, "missing"),
                                                             ({"d"}, "missing"), ({"b"}, "a tensor is a leaf"),
                                                             (set(), "2 are missing"), ({"a", "c"}, "not one of"),
                                                             ({1}, "not one of"), (3, "a set of labels")]],
    *[("quiz.2", right, True, None, ()) for right in ([1.0, 1.0, 1.0], [1, 1, 1], (1, 1, 1), torch.ones(3), np.ones(3),
                                                      torch.ones(3, dtype=torch.int64))],
    *[("quiz.2", wrong, False, says, LQ2) for wrong, says in [
        ([0, 0, 0], "y += 1 is not"), ([2, 2, 2], "y = y * 2 makes a new tensor"), ([5, 2, 2], "y[0] = 5"),
        ([5, 1, 1], "y[0] = 5"), ([3, 3, 3], "follow which tensor"), ([1, 1], "three values"),
        ([1, 1, 1, 1], "three values"), ("111", "three values"), ([True, True, True], "three values"),
        (torch.ones(2, 2), "three values")]],
    ("quiz.3", RIGHT_Q3, True, None, ()), ("quiz.3", sorted(RIGHT_Q3), True, None, ()),
    ("quiz.3", {label.replace(" ", "") for label in RIGHT_Q3}, True, None, ()),
    *[("quiz.3", wrong, False, says, LQ3) for wrong, says in [
        (RIGHT_Q3 - {"x.detach()"}, "1 is missing"), (RIGHT_Q3 | {"x[[0, 2]]"}, "does not belong"),
        (RIGHT_Q3 | {"x + 0"}, "does not belong"), (RIGHT_Q3 | {"x.t().reshape(12)"}, "does not belong"),
        (RIGHT_Q3 | {"x[x > 5]"}, "does not belong"), ({"x.view(2, 6)"}, "not one of"), ("x[1]", "a set of labels"),
        ({"x[1]": True}, "a set of labels")]],
    ("quiz.4", RIGHT_Q4, True, None, ()), ("quiz.4", list(RIGHT_Q4), True, None, ()),
    ("quiz.4", {label.replace(" ", "") for label in RIGHT_Q4}, True, None, ()),
    *[("quiz.4", wrong, False, says, LQ4) for wrong, says in [
        (RIGHT_Q4 | {"x = x + 1"}, "does not belong"), (RIGHT_Q4 | {"x.clone().zero_()"}, "does not belong"),
        (RIGHT_Q4 | {"x.add(1)"}, "does not belong"), (RIGHT_Q4 - {"x.detach().zero_()"}, "1 is missing"),
        (RIGHT_Q4 - {"torch.add(x, 1, out=x)"}, "missing"), (set(), "6 are missing"), ({"x.mul_(2)"}, "not one of")]],
    ("quiz.5", RIGHT_Q5, True, None, ()),
    ("quiz.5", {k.replace(" ", ""): v.upper() + " " for k, v in RIGHT_Q5.items()}, True, None, ()),
    *[("quiz.5", {**RIGHT_Q5, **change}, False, says, ()) for change, says in [
        ({"y.data.mul_(2)": "error"}, "1 of the 4"), ({"y.data.mul_(2)": "right gradient"}, "1 of the 4"),
        ({"y.detach().mul_(2)": "wrong gradient"}, "1 of the 4"), ({"y.mul_(2)": "right gradient"}, "1 of the 4"),
        ({"y = y * 2": "error"}, "1 of the 4"), ({"y = y * 2": "right"}, "is not one of the options"),
        ({"y = y * 2": None}, "is not one of the options"), ({"y.relu_()": "error"}, "not one of the options")]],
    ("quiz.5", {k: v for k, v in RIGHT_Q5.items() if k != "y.mul_(2)"}, False, "the keys should be exactly", ()),
    ("quiz.5", list(RIGHT_Q5.values()), False, "a dict with the keys", ()),
    *[("quiz.6", right, True, None, ()) for right in ({"CloneBackward0": 1}, {"CloneBackward0": 1, "MulBackward0": 0},
                                                      Counter({"CloneBackward0": 1}), {"CloneBackward0": np.int64(1)},
                                                      {"CloneBackward0": 1.0})],
    *[("quiz.6", wrong, False, says, LQ6) for wrong, says in [
        ({"CloneBackward0": 2}, "count the node classes"), ({"CloneBackward0": 1, "AccumulateGrad": 1}, "count"),
        ({"Clone": 1}, "class names that graph_nodes prints"), ({"CloneBackward0": True}, "a dict"),
        ("CloneBackward0", "a dict"), ({}, "count the node classes"), (1, "a dict")]],
    *[("quiz.7", right, True, None, ()) for right in ((40_000, 0), [40000, 0], (np.int64(40000), 0), (40000.0, 0.0),
                                                      (torch.tensor(40000), torch.tensor(0)))],
    *[("quiz.7", wrong, False, says, LQ7) for wrong, says in [
        ((4_000_000, 0), "whole storage"), ((40_000, 40_000), "the allocation is right"),
        ((10_000, 0), "first number"), ((40_000, 4), "the allocation is right"), ((0, 40_000), "first number"),
        ((40_000.5, 0), "whole numbers"), (40_000, "a tuple"), ((40_000,), "a tuple"), (("40000", "0"), "a tuple")]],
    *[("quiz.8", right, True, None, ()) for right in ((16.0, 14.0), [16, 14], (torch.tensor([16.0]), np.float32(14.0)))],
    *[("quiz.8", wrong, False, says, LQ8) for wrong, says in [
        ((14.0, 16.0), "the order"), ((14.0, 14.0), "both versions"), ((16.0, 16.0), "both versions"),
        ((8.0, 8.0), "write down"), ((12.0, 14.0), "write down"), (16.0, "a tuple"), ((16.0,), "a tuple"),
        (("16", "14"), "a tuple")]],
    *[("quiz.9", right, True, None, ()) for right in ({"B", "D", "E"}, ["b", "d", "e"], ("(B)", " d", "E"),
                                                      ["B", "D", "E", "E"], "BDE")],
    *[("quiz.9", wrong, False, says, LQ9) for wrong, says in [
        ({"B", "D"}, "1 is missing"), ({"B", "D", "E", "C"}, "does not belong"), ({"A", "B", "D", "E"}, "not belong"),
        ({"B"}, "2 are missing"), (set(), "3 are missing"), ({"F"}, "not one of"), ({2}, "not one of")]],
    *[("quiz.10", right, True, None, ()) for right in ("b", "B", " b ", "(b)")],
    *[("quiz.10", wrong, False, says, ()) for wrong, says in [
        ("a", "makes no copy"), ("c", "__iadd__"), ("d", "wherever the op runs"), ("e", "not one of"),
        ("bc", "not one of"), (2, "not one of"), (["b"], "not one of")]],
    *[("quiz.11", right, True, None, ()) for right in (HELD_11, np.int64(HELD_11), float(HELD_11),
                                                       torch.tensor(HELD_11))],
    *[("quiz.11", wrong, False, says, LQ11) for wrong, says in [
        (0, "still alive"), (HELD_11 // 4, "bytes, not elements"), (65_536, "one block's clone"),
        (HELD_11 + 4 * 256 * 2 * 2 * 4, "outlives the block"), (HELD_11 + 0.5, "whole number"),
        (str(HELD_11), "whole number"), ([HELD_11], "whole number")]],
    # a set has no order: refused where the order of the numbers is the answer, right values or not
    ("01.2", {8.0, 6.0, 4.0}, False, "three numbers", ("4",)), ("02.1", {3, 2, 1}, False, "as a list", ()),
    ("03.1", {12, 4, 1}, False, "a tuple of three ints", ()), ("quiz.8", {14.0, 16.0}, False, "(output with", LQ8),
    ("04.2", "B C\nD F G", True, None, ()), ("quiz.6", {"CloneBackward0": 1, "CloneBackward0 ": 1}, False, "each once", ()),
    ("quiz.6", {"CloneBackward": 1}, False, "class names that graph_nodes prints", ()),
    # NumPy arrays of one element count as their number, as one-element tensors do
    *[("07.1", right, True, None, ()) for right in (np.array(200), np.array([200]), torch.tensor([200]))],
    ("07.1", np.array(True), False, "whole number", L07_1), ("07.1", np.array([200, 0]), False, "whole number", L07_1),
    # same_storage must say True or False, not a truthy or falsy stand-in
    *[("02.2", fn, False, "True or False", L02_2) for fn in (lambda x, y: "yes" if x.untyped_storage() is
                                                            y.untyped_storage() else "", lambda x, y: 1)],
]


def _case_id(case):
    return f"{case[0]}-{'right' if case[2] else 'wrong'}"


@pytest.mark.parametrize("exercise_id, answer, accepted, says, leaks", CASES, ids=[_case_id(c) for c in CASES])
def test_every_answer_gets_its_verdict_and_hint(exercise_id, answer, accepted, says, leaks, capsys):
    verdict = check(exercise_id, answer)
    out = capsys.readouterr().out
    assert bool(verdict) is accepted, out
    assert out.strip() == verdict.message
    if not accepted:
        assert out.startswith(f"✗ {exercise_id}: not yet. Hint: ") and says in out, out
        for leak in leaks:
            assert leak not in out.replace(exercise_id, ""), f"the hint gives away {leak!r}"


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
    assert checked >= 17, checked   # every literal example there is today


def test_the_table_covers_every_exercise_with_a_right_and_a_wrong_answer():
    for accepted in (True, False):
        assert {c[0] for c in CASES if c[2] is accepted} == set(exercise_ids())


# --- check() itself ---------------------------------------------------------------------------------------


def test_a_template_left_as_handed_out_is_not_yet_answered(capsys):
    def safe_relu(x):
        ...   # your code here

    def documented(x):
        """A docstring, then the template's body."""
        ...

    def returns_ellipsis(t):
        return ...   # your code here

    def passes(x):
        pass

    made_by_exec = {}
    exec("def safe_relu(x):\n    ...", made_by_exec)   # no source file to read: told by its instructions
    for template in [..., None, "...", {"a": ..., "b": 1}, (1, ...), [...], safe_relu, documented, returns_ellipsis,
                     passes, made_by_exec["safe_relu"]]:
        verdict = check("04.3", template)
        assert not verdict and isinstance(verdict, Verdict)
        assert verdict.message == "… 04.3: no answer yet. Replace each ... with your answer."
    assert "no answer yet" not in check("04.3", lambda x: ...).message   # a lambda is an answer, if a wrong one


def test_unknown_id_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown exercise_id 'nope'; known ids: "):
        check("nope", 1)
    with pytest.raises(TypeError, match="exercise_id must be a string"):
        check(1, 1)


def test_registering_an_id_twice_is_refused():
    from clonelab.exercises import register

    with pytest.raises(ValueError, match="registered twice"):
        register(Exercise("demo.1", hint="again", form="anything", parse=function, judge=lambda f: True))


def _patched(monkeypatch, exercise: Exercise) -> None:
    from clonelab.exercises import _core

    monkeypatch.setitem(_core._REGISTRY, exercise.id, exercise)


def test_an_answer_that_breaks_the_check_is_wrong_not_a_crash(monkeypatch):
    _patched(monkeypatch, Exercise("test.raises", hint="a number", form="a number", parse=lambda a: a,
                                   judge=lambda answer: answer + 1 == 5))   # a string answer raises TypeError here
    verdict = check("test.raises", "four")
    assert not verdict and verdict.message.startswith("✗ test.raises: not yet. Hint: a number (your answer raised "
                                                      "TypeError: ")


def test_an_unreadable_answer_is_told_the_form_or_what_is_wrong_with_it(monkeypatch):
    def parse(answer):
        raise Unreadable(answer)

    _patched(monkeypatch, Exercise("test.form", hint="unused", form="two ints", parse=parse, judge=bool))
    assert check("test.form", "").message.endswith("Hint: answer with two ints.")
    assert check("test.form", "is it the same storage?").message.endswith("Hint: is it the same storage?")
    assert check("test.form", "look at the strides").message.endswith("Hint: look at the strides.")


def test_each_truth_runs_once_and_leaves_the_random_state_alone(monkeypatch):
    from clonelab.exercises import _core as exercises

    runs = []

    def truth():
        runs.append(torch.rand(()))   # draws from the global generator
        return 1

    _patched(monkeypatch, Exercise("test.once", hint="unused", form="an int", parse=int, truth=truth))
    monkeypatch.setattr(exercises, "_TRUTHS", {})
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    assert check("test.once", 1) and check("test.once", 1) and not check("test.once", 2)
    assert len(runs) == 1
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("exercise_id, answer", [("06.3", 0), ("08.2", lambda x, w: x + w * F.relu(x)),
                                                 ("09.2", by_version), ("10.2", out_of_place_seeded),
                                                 ("quiz.9", {"A"})])
def test_a_check_that_builds_random_weights_leaves_the_random_state_alone(exercise_id, answer, capsys):
    torch.manual_seed(123)
    expected = torch.randn(3)
    torch.manual_seed(123)
    check(exercise_id, answer)
    assert torch.equal(torch.randn(3), expected)


def test_every_exercise_is_used_in_a_notebook_and_every_check_there_exists():
    used = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                used |= set(re.findall(r"""\bcheck\(\s*["']([^"']+)["']""", cell.source))
    assert used == {i for i in exercise_ids() if not i.startswith("demo.")}


def test_the_labels_and_lines_of_the_checks_are_those_the_notebooks_show():
    def markdown(name, marker):
        nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        return next(c.source for c in nb.cells if c.cell_type == "markdown" and marker in c.source)

    task = markdown("04_inplace_and_mutability.ipynb", "Exercise 04.2")
    assert all(f"| {letter} | `{text}` |" in task for letter, text in values.LINES_04_2.items())
    task = markdown("05_autograd_meets_inplace.ipynb", "Exercise 05.1")
    assert all(f'`"{name}"`' in task for name in values.OPS_05_1)
    for labels, marker in [(values.QUIZ_3, "Question 3 "), (values.QUIZ_4, "Question 4 ")]:
        assert all(f'`"{label}"`' in markdown("11_summary_and_quiz.ipynb", marker) for label in labels)


# --- the written-down and measured answers, against what PyTorch does -------------------------------------


def test_02_2_storage_pointers_really_are_zero_without_memory():
    """The premise of the exercise's edge cases, on this torch."""
    assert torch.empty(0).untyped_storage().data_ptr() == 0
    assert torch.empty(3, device="meta").untyped_storage().data_ptr() == 0


def test_07_the_measured_answers_pass(capsys):
    x = torch.zeros(10, 10, dtype=torch.float16)
    with measure() as m:
        x.clone()
    assert check("07.1", m.allocated)


def test_08_1_the_computed_answer_passes(capsys):
    input_data = torch.tensor([1.0])
    w1, w2 = torch.tensor([2.0], requires_grad=True), torch.tensor([3.0], requires_grad=True)
    out = input_data + w2 * (w1 * input_data)
    ((out - 8.5) ** 2).backward()
    assert check("08.1", (out.item(), w1.grad.item()))


def test_09_1_the_expected_number_is_what_the_blocks_see():
    torch.manual_seed(0)
    net = resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000)
    sizes = []
    for m in net.modules():
        if isinstance(m, BasicBlock):
            m.register_forward_pre_hook(lambda module, args: sizes.append(args[0].nbytes))
    with torch.no_grad():
        net(torch.randn(8, 3, 224, 224))
    assert sum(sizes) == RIGHT_09_1


def test_09_2_the_blocks_write_as_the_check_expects():
    from clonelab.exercises.functions import _blocks_09_2

    for description, block, expected in _blocks_09_2():
        assert by_version(block, torch.randn(2, 8, 6, 6)) == expected, description


def test_09_3_the_expected_numbers_are_measured_on_the_questions_input():
    torch.manual_seed(0)
    x = torch.randn(8, 64, 32, 32)
    makers = {"plain": lambda mode: SecondCodeBlock(64, 64, identity=mode),
              "down": lambda mode: SecondCodeBlock(64, 128, stride=2, identity=mode,
                                                   downsample=torch.nn.Sequential(conv1x1(64, 128, 2),
                                                                                  torch.nn.BatchNorm2d(128)))}
    held = {}
    for name, make in makers.items():
        for mode in ("alias", "clone"):
            block = make(mode)
            block(x)
            with measure() as m:
                out = block(x)  # noqa: F841  (kept: the graph stays alive)
            held[name, mode] = m.net
    assert (held["plain", "clone"] - held["plain", "alias"], held["down", "clone"] - held["down", "alias"]) \
        == (0, X_09_3)


def test_10_1_the_written_answer_is_what_training_does():
    """Each option, run: A, B, C and E keep the alias and clone runs identical; D and F do not."""
    from clonelab.data import Digits, load_digits_tensors
    from clonelab.training import train

    d = load_digits_tensors()
    small = Digits(d.x_train[:192], d.y_train[:192], d.x_test[:64], d.y_test[:64])

    def same(*, block=BasicBlock, inplace=True, seed=(0, 0), lr=(1e-3, 1e-3)):
        losses = []
        for mode, s, rate in zip(("alias", "clone"), seed, lr):
            torch.manual_seed(0)
            model = resnet(block, [1, 1], in_channels=1, base_width=8, stem="small", identity=mode, inplace=inplace)
            losses.append(train(model, small, epochs=1, seed=s, lr=rate, progress=False).step_loss)
        return losses[0] == losses[1]

    outcome = {"A": same(seed=(1, 1)), "B": same(inplace=False), "C": same(block=Bottleneck),
               "D": same(block=ReluFirstBlock), "E": same(block=PreActBlock), "F": same(lr=(1e-3, 2e-3))}
    assert check("10.1", {k for k, kept in outcome.items() if kept})


def test_quiz_7_matches_the_allocator(capsys):
    x = torch.zeros(1000, 1000, requires_grad=True)
    with measure() as m:
        x[:, :10].clone()
    assert check("quiz.7", (m.allocated, 0))


def test_quiz_10_the_written_answer_is_what_pytorch_does(capsys):
    """b is the reason: the block never writes into x, and BN keeps no output of its own for backward."""
    torch.manual_seed(0)
    blocks = {mode: BasicBlock(4, 4, identity=mode) for mode in ("alias", "clone")}
    blocks["clone"].load_state_dict(blocks["alias"].state_dict())
    block = blocks["alias"]
    bn_out = block.bn2(block.conv2(torch.randn(2, 4, 5, 5, requires_grad=True)))
    kept = {r["saved"] for r in saved_by_node(bn_out) if r["node"] == "NativeBatchNormBackward0"}
    assert "result0" not in kept and "result" not in kept and "input" in kept
    x = torch.randn(2, 4, 5, 5, requires_grad=True) * 1.0     # a non-leaf, as between blocks
    outs, grads = [], []
    for block in blocks.values():
        z = x.detach().requires_grad_()
        out = block(z * 1.0)
        out.sum().backward()                                   # the in-place += and ReLU raise nothing
        outs.append(out.detach())
        grads.append(z.grad)
    assert torch.equal(*outs) and torch.equal(*grads)
    before = x._version
    blocks["alias"](x)
    assert x._version == before                                # the block only reads x
    assert check("quiz.10", "b")


def test_quiz_11_matches_the_allocator(capsys):
    """The clone copy of a ResNet-18 holds exactly this much more than the alias copy after a forward pass."""
    from clonelab import model_clone_cost

    torch.manual_seed(0)
    cost = model_clone_cost(resnet(SecondCodeBlock, [2, 2, 2, 2], num_classes=1000), torch.randn(values.QUIZ_11_SHAPE),
                            repeat=0)
    assert cost["extra_net"] == HELD_11
    assert check("quiz.11", cost["extra_net"])
