"""The exercises whose answer is a function: each judge runs it on inputs chosen to tell the right idea from
the common wrong ones, compares with what PyTorch does, and names the first input it gets wrong.

>>> from clonelab import check
>>> bool(check("01.1", lambda t: t))
✗ 01.1: not yet. Hint: your function returned the very object it was given: that is what `=` does, not a copy.
False
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from clonelab.exercises._core import Exercise, Unreadable, function, inplace_error, register, whole
from clonelab.graphs import graph_nodes
from clonelab.inspection import shares_storage
from clonelab.models import BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock, resnet

TOLERANCE = 1e-5  # absolute and relative, for float32 outputs and gradients


def _code(exercise_id: str, name: str, hint: str, judge: Callable | None = None) -> Callable:
    """Register ``judge`` (or the decorated function) for ``exercise_id``, whose answer is the function ``name``."""
    def add(judge: Callable[[Callable], bool | str]):
        register(Exercise(exercise_id, hint=hint, form=f"the function {name} itself (no parentheses)",
                          parse=function, judge=judge))
        return judge
    return add(judge) if judge else add


def _call_answer(fn: Callable, *args, returns: type | tuple | None = torch.Tensor, what: str = "a tensor") -> Any:
    """``fn(*args)``, which must return a ``returns`` (``what``; None: anything); else Unreadable says so."""
    result = fn(*args)
    if result is ...:
        raise Unreadable("your function still returns ...: replace it with your code")
    if returns is not None and not isinstance(result, returns):
        raise Unreadable(f"your function should return {what}, not {type(result).__name__}")
    return result


def _close(a: torch.Tensor | None, b: torch.Tensor | None) -> bool:
    return (a is None) == (b is None) and (a is None or (a.shape == b.shape and torch.allclose(
        a, b, rtol=TOLERANCE, atol=TOLERANCE)))


def _reads_only(answer, cases, what: str, expected: Callable, also: Callable | None = None) -> bool | str:
    """01.1, 03.2, 03.3, 04.3: ``answer(*case)`` must leave x (``case[0]``) alone and return ``expected(*case)``
    (``what``) in shape, dtype and values; then ``also(result, x)`` may name a problem."""
    for x, *rest in cases:
        before, state = x.detach().clone(), (x._version, x.requires_grad)
        want, got = expected(before, *rest), _call_answer(answer, x, *rest)
        if (x._version, x.requires_grad) != state or not torch.equal(x.detach(), before):
            return ("your function wrote into x (its values or its version counter changed): an alias such as "
                    "identity = x would see that; it should only read x")
        if got.shape != want.shape:
            return f"for x of shape {tuple(x.shape)} the result should have shape {tuple(want.shape)}"
        if got.dtype != want.dtype or not torch.equal(got.detach(), want):
            return f"the result is not {what}"
        if also and (problem := also(got, x)):
            return problem
    return True


def _view(got: torch.Tensor, x: torch.Tensor) -> str | None:
    if not shares_storage(got, x):
        return "the values are right, but the result owns new memory: it is a copy, and a view was possible"


def _tells_apart(answer, cases) -> bool | str:
    """02.2, 09.2: ``cases`` holds (arguments, the right True or False, the hint when the answer gets it wrong).
    The answer must return True or False (or a one-element bool tensor)."""
    for args, expected, hint in cases:
        got = _call_answer(answer, *args, returns=(bool, np.bool_, torch.Tensor), what="True or False")
        if isinstance(got, torch.Tensor) and (got.numel() != 1 or got.dtype != torch.bool):
            raise Unreadable("your function should return True or False")
        if bool(got) != expected:
            return hint
    return True


@_code("01.1", "independent_copy",
       "the result needs new memory AND no link to the autograd graph; the table of four spellings shows which "
       "spelling gives both")
def _independent_copy(answer):
    def unlinked(got, x):
        if got is x:
            return "your function returned the very object it was given: that is what `=` does, not a copy"
        if shares_storage(got, x):
            return "your result shares memory with the input, so a write into one would show in the other"
        if got.requires_grad:
            return "your result is still connected to the autograd graph (it requires grad)"

    leaf = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
    leaf.grad = torch.tensor([1.0, 2.0, 3.0])
    cases = [(leaf,), (torch.tensor([1.0, -1.0], requires_grad=True) * 5,),   # a leaf, a non-leaf,
             (torch.arange(6).view(2, 3).t(),)]                                  # a non-contiguous int64 tensor
    return _reads_only(answer, cases, "a copy of x: the same values, shape and dtype", lambda x: x, unlinked)


@_code("02.2", "same_storage", "compare the storages themselves, not where each tensor's first element is")
def _same_storage(answer):
    base, meta = torch.arange(12.0), torch.empty(3, device="meta")
    grid = base.view(3, 4)
    view = "views (another tensor object, the same memory) share storage too"
    later = "a slice that starts later has another data_ptr() but lives in the same storage"
    own = "a clone, or a tensor made separately, has its own storage even when the values are equal"
    zero = ("right for ordinary tensors, but two separate storages with no memory behind them ({}) both have the "
            "storage pointer 0, so a pointer cannot tell them apart; ask whether x and y hold the very same storage "
            "object")
    return _tells_apart(answer, [
        ((base, base), True, view), ((grid, grid.t()), True, view), ((base, base[3:]), True, later),
        ((base[:4], base[8:]), True, later), ((grid[:, 1], base), True, later),
        ((base, base.view(torch.int32)), True, view),   # another dtype, the same bytes
        ((base, base.clone()), False, own), ((base, torch.arange(12.0)), False, own),
        ((base[3:], base.clone()[3:]), False, own),
        ((torch.empty(0), torch.empty(0)), False, zero.format("empty tensors")),
        ((torch.zeros(2, 0), torch.empty(0)), False, zero.format("empty tensors")),
        ((meta, meta[1:]), True, later), ((meta, torch.empty(3, device="meta")), False, zero.format("meta tensors"))])


@_code("02.3", "add_into",
       "inside the function, x = ... only moves the local name x; write into the tensor that x names instead")
def _add_into(answer):
    plain, base = torch.arange(4.0), torch.zeros(6)
    # (x, y, another view of x's elements); the second x is a view itself: the write must land in its base
    for x, y, other in [(plain, torch.arange(1.0, 5.0), plain[:]),
                        (base[::2], torch.tensor([1.0, 2.0, 3.0]), base[::2])]:
        x_before, y_before, storage = x.clone(), y.clone(), x.untyped_storage().data_ptr()
        _call_answer(answer, x, y, returns=None)
        if not torch.equal(y, y_before):
            return "leave y alone: only x should change"
        if torch.equal(x, x_before):
            return ("after your function ran, x still holds its old values; remember that x = ... inside a "
                    "function only moves the local name x")
        if x.untyped_storage().data_ptr() != storage:
            return "x must keep its memory; write the new values into the tensor x already is"
        if not torch.equal(x, x_before + y):
            return "x should end up holding x + y"
        if not torch.equal(other, x):
            return "a view of the same memory does not see your write"
    return True


# 03.2, 03.3 and 04.3: functions that only read x
_code("03.2", "column", "look for an indexing form or a method that only changes shape, stride and offset",
      lambda answer: _reads_only(answer, [(torch.arange(20.0).view(4, 5), 0), (torch.arange(20.0).view(4, 5), 3),
                                          (torch.arange(20.0).view(4, 5).t(), 2), (torch.arange(6.0).view(2, 3), 2)],
                                 "column j of x", lambda x, j: x[:, j], _view))
_code("03.3", "flat", "you need something that returns a view when the strides allow it and copies only when they "
                      "do not",
      lambda answer: _reads_only(answer, [(torch.arange(12.0).view(3, 4),), (torch.arange(12.0).view(3, 4).t(),),
                                          (torch.arange(24.0).view(2, 3, 4),),
                                          (torch.arange(24.0).view(2, 3, 4).permute(2, 0, 1),)],
                                 "x's elements in row-major order, in 1-D", lambda x: x.contiguous().view(-1),
                                 lambda got, x: x.is_contiguous() and _view(got, x)))
_code("04.3", "safe_relu", "compute the result out of place, or write into a copy; never into x",
      lambda answer: _reads_only(answer, [(torch.randn(8, generator=torch.Generator().manual_seed(seed)),)
                                          for seed in (0, 1)], "relu(x)", torch.relu))


@_code("05.2", "fixed",
       "leave sigmoid's output unchanged: make the doubled tensor a new one (an out-of-place op), not a write into "
       "the old one")
def _fixed_sigmoid_double(answer):
    for data in [torch.tensor([-2.0, 0.0, 0.5, 3.0]), torch.randn(3, 4, generator=torch.Generator().manual_seed(5)),
                 torch.tensor(1.5)]:
        x, s = data.clone().requires_grad_(True), torch.sigmoid(data)
        out = _call_answer(answer, x)
        if out.numel() != 1 or out.grad_fn is None:
            return "fixed(x) must return one number that autograd tracks back to x (like y.sum())"
        if not torch.allclose(out.detach(), (2 * s).sum(), rtol=TOLERANCE, atol=1e-6):
            return "the value is not (2 * sigmoid(x)).sum()"
        try:
            out.backward()
        except RuntimeError as err:
            if inplace_error(err) != "saved":   # any other error: the answer's, reported by check
                raise
            return "backward still raises: something sigmoid saved is still overwritten in place"
        if not torch.allclose(x.grad, 2 * s * (1 - s), rtol=TOLERANCE, atol=1e-6):
            return ("the value is right but the gradient is wrong: a write that autograd cannot see (through .data "
                    "or a NumPy array) hides the problem instead of fixing it")
    return True


@_code("05.3", "step", "turn gradient tracking off for the update, then change w's own memory with an in-place op")
def _sgd_step(answer):
    for lr in (0.1, 0.5):
        w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (w ** 2).sum().backward()
        grad, before, ptr, version = w.grad.clone(), w.detach().clone(), w.data_ptr(), w._version
        try:
            _call_answer(answer, w, lr, returns=None)
        except RuntimeError as err:
            if inplace_error(err) != "leaf":   # any other error: the answer's, reported by check
                raise
            return "the update raised the leaf error: autograd is still recording it"
        if torch.equal(w.detach(), before):
            return ("w did not change: step must write the new values into the tensor w itself (doing nothing, or "
                    "binding the name w to a new tensor inside step, leaves the caller's w as it was)")
        if w.data_ptr() != ptr:
            return "w has new memory: the update must write into w's existing memory"
        if not torch.allclose(w.detach(), before - lr * grad, rtol=1e-6, atol=1e-7):
            return "w changed, but not to w - lr * w.grad"
        if not (w.is_leaf and w.requires_grad and w.grad_fn is None):
            return "after the step w must still be a leaf that requires grad"
        if w._version == version:
            return ("the values are right but w._version did not move: autograd cannot see this write (the .data "
                    "trap; a write through a NumPy array is the same)")
    return True


@_code("06.1", "make",
       "read the Counter as a recipe: two leaves, one multiplication, one sigmoid, one sum; graph_nodes(make(a, b)) "
       "shows what you built")
def _graph_from_counts(answer):
    target = Counter({"AccumulateGrad": 2, "MulBackward0": 1, "SigmoidBackward0": 1, "SumBackward0": 1})
    for shape in [(4,), (2, 2)]:
        a = torch.linspace(0.1, 0.9, 4).reshape(shape).requires_grad_(True)
        b = torch.linspace(-1.0, 1.0, 4).reshape(shape).requires_grad_(True)
        out = _call_answer(answer, a, b)
        if out.grad_fn is None:
            return "the result has no grad_fn: build it from a and b with ops autograd records"
        got = graph_nodes(out)
        extra, missing = got - target, target - got
        if extra or missing:
            return "; ".join(f"{what}: " + ", ".join(f"{n} x{k}" for n, k in nodes.items())
                             for what, nodes in (("your graph has extra nodes", extra), ("it lacks", missing)) if nodes)
    return True


@_code("07.2", "clone_cost", "count the elements the tensor shows and the bytes each one takes in the tensor's dtype; "
                             "how they are laid out in storage does not matter")
def _clone_cost(answer):
    big = torch.ones(100, 100)
    for t in [torch.ones(7), torch.ones(3, 5, dtype=torch.float64),
              big[:2],                                  # a view: 2 rows of a 40,000-byte storage
              big[10:20, 5:50], big[:, ::3],            # a view with gaps between its rows; not dense
              torch.ones(8, 8).t(),                     # transposed, still dense
              torch.ones(1).expand(1000),               # stride 0: 4 bytes of storage, 1000 elements
              torch.arange(24, dtype=torch.int8).view(2, 3, 4).permute(2, 0, 1),
              torch.zeros(0, 3), torch.tensor(2.5), torch.ones(4, 4, dtype=torch.bool)]:
        try:
            got = whole(_call_answer(answer, t, returns=None))
        except Unreadable:
            return "clone_cost(t) should return a whole number of bytes"
        if got == t.clone().untyped_storage().nbytes():
            continue
        if got == t.numel():
            return "that counts elements; a clone allocates bytes"
        if got == t.numel() * 4:
            return (f"4 bytes per element is right for float32 only; this tensor is {t.dtype}, whose elements take "
                    "a different number of bytes")
        if got == t.untyped_storage().nbytes():
            return ("for a view or an expanded tensor the storage is not what gets copied: try "
                    "torch.ones(100, 100)[:2] and torch.ones(1).expand(1000) under measure()")
        return False
    return True


@_code("08.2", "fixed_block", "the trouble is the in-place write into x, not the name that points at it")
def _fixed_block(answer):
    # x made five ways, from seeded data; a sigmoid first, so a clone-based answer hears why clone does not help
    for made_by in ["torch.sigmoid(z)", "F.conv2d(z, k, padding=1)", "z * 2.0", "torch.relu(z)", "z"]:
        name = "x a leaf that requires grad" if made_by == "z" else f"x = {made_by}"
        runs = []
        for block in (lambda x, w: x + w * torch.relu(x), answer):   # what the block means, then the answer
            g = torch.Generator().manual_seed(8)
            leaves = [torch.randn(2, 3, 5, 5, generator=g).requires_grad_(),
                      (torch.randn(3, 3, 3, 3, generator=g) * 0.3).requires_grad_(),
                      torch.tensor(1.5, requires_grad=True)]
            x = eval(made_by, {"torch": torch, "F": F, "z": leaves[0], "k": leaves[1]})   # our own fixed lines
            before = x.detach().clone()
            try:
                out = _call_answer(block, x, leaves[2])
                out.sum().backward()
            except RuntimeError as err:
                return {"leaf": f"with {name}, your block raised at once: it writes into x in place",
                        "saved": f"with {name}, backward raised: autograd saved x, and the block wrote into it (a "
                                 "clone of x for the skip would not stop that write)"}[inplace_error(err)]
            if not torch.equal(x.detach(), before):
                return f"with {name}, the caller's x was changed: the block must leave it alone"
            runs.append((out, leaves))
        (expected, leaves_ref), (out, leaves) = runs
        if not _close(out, expected):
            return f"with {name}, the output is not x + w * relu(x)"
        if not all(_close(a.grad, b.grad) for a, b in zip(leaves, leaves_ref)):
            return f"with {name}, the output is right but the gradients are not"
    return True


class _Writes(torch.nn.Module):
    """A block that runs one fixed line of our own on its input x and returns ``out``."""

    def __init__(self, code: str):
        super().__init__()
        self.code = code

    def forward(self, x):
        ns = {"x": x}
        exec(self.code, ns)
        return ns["out"]


def _blocks_09_2():
    """(description, block, does it write into its input?), with the blocks built from a fixed seed."""
    torch.manual_seed(9)
    return [("BasicBlock(8, 8)", BasicBlock(8, 8), False),
            ("a block that writes in place into its own clone of x", _Writes("out = x.clone(); out.relu_()"), False),
            ("ReluFirstBlock(8, 8) with an in-place ReLU", ReluFirstBlock(8, 8), True),
            ("Bottleneck(8, 2)", Bottleneck(8, 2), False), ("PreActBlock(8, 8)", PreActBlock(8, 8), False),
            ("ReluFirstBlock(8, 8, inplace=False)", ReluFirstBlock(8, 8, inplace=False), False),
            ("a block whose in-place write keeps x's values (x.mul_(1.0))", _Writes("x.mul_(1.0); out = x * 2"), True),
            ("a block that writes into a view of x", _Writes("x[:, :1] = x[:, :1].abs(); out = x + 1"), True)]


@_code("09.2", "writes_into_input", "an in-place op can leave the values as they were; look for something that counts "
                                    "in-place ops on a tensor and its views, not at the values")
def _writes_into_input(answer):
    def hint(description: str, wrote: bool) -> str:
        if "keeps x's values" in description:
            return f"wrong for {description}: its values do not change, but it does write into x"
        if "a view of x" in description:
            return f"wrong for {description}: a write through a view is a write into x"
        return f"wrong for {description}: your function says it {'only read x' if wrote else 'wrote into x'}"

    x = torch.randn(2, 8, 6, 6, generator=torch.Generator().manual_seed(2))  # negative values: ReLU changes them
    # each block twice: on a fresh x, and on one whose counter is 1 already (a write before the call is not the block's)
    return _tells_apart(answer, [((block, make()), wrote, hint(description + where, wrote))
                                 for make, where in ((x.clone, ""), (lambda: x.clone().mul_(1.0), ", given an x "
                                                                     "that was written into before the call"))
                                 for description, block, wrote in _blocks_09_2()])


@_code("10.2", "make_fixed_model", "there are two fixes for the ReLU-first block; only one of them stops the write "
                                   "into the block's input")
def _fixed_model(answer):
    model = _call_answer(answer, returns=torch.nn.Module, what="the model, an nn.Module")
    # the intended network: every block computes x + F(relu(x)) and only reads x
    reference = resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=16, stem="small", inplace=False)
    try:
        reference.load_state_dict(model.state_dict())
    except RuntimeError:
        return ("build the notebook's network: resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=WIDTH, "
                "stem=\"small\", ...), with the options that fix it")
    inputs = []   # (block name, its input, the input's version as the block starts)
    handles = [m.register_forward_pre_hook(lambda m, args, n=name: inputs.append((n, args[0], args[0]._version)))
               for name, m in model.named_modules() if re.fullmatch(r"layer\d+\.\d+", name)]
    try:
        model.train()   # the reference, just built, is in training mode already
        x = torch.rand(16, 1, 8, 8, generator=torch.Generator().manual_seed(10))
        out, expected = model(x), reference(x)
        out.sum().backward()  # must not raise
    finally:
        for h in handles:
            h.remove()
    overwritten = [name for name, block_input, version in inputs if block_input._version != version]
    if not isinstance(out, torch.Tensor) or out.shape != expected.shape:
        return "the model should return logits of shape (batch, 10)"
    if not _close(out, expected):
        return "the outputs are not those of x + F(relu(x)) in every block: the skip still sees relu(x)"
    if overwritten:
        return (f"the outputs are right, but {', '.join(overwritten)} still wrote into the block input in place; "
                "a clone of x for the skip does not stop that write")
    return True
