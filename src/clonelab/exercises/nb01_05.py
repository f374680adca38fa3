"""The exercises of notebooks 01-05: copies, names and storage, views, in-place writes, autograd meets them."""

from __future__ import annotations

from typing import Any, Callable

import torch

from clonelab.exercises._core import (TOLERANCE, Exercise, call_answer, choices, function_exercise, inplace_error,
                                      numbers, register, snippet, tells_apart, whole)
from clonelab.i18n import gettext as _
from clonelab.inspection import shares_storage

# The code the notebooks show in these exercises, which the truths run as it stands (a test compares them)
NOTEBOOK_CODE = {
    "01.2": ("a = torch.tensor([2., 3., 4.], requires_grad=True)\nb = a.clone()\nc = a\nd = a.detach()\n"
             "e = a.detach().clone()\nloss = (b * c + d * e).sum()\nloss.backward()"),
    "04.1": "a = torch.zeros(3)\nb = a\nc = a[1:]\na += 1\nc.mul_(2)\nb = b + 1\nb.add_(1)",
}
LINES_04_2 = {"A": "x = x * 2", "B": "x *= 2", "C": "x[:, 0] = 0", "D": "x.t().add_(1)", "E": "x.clamp(min=0)",
              "F": "torch.exp(x, out=x)", "G": "y = x.detach(); y.zero_()", "H": "y = x.clone(); y.zero_()"}
OPS_05_1 = {"relu": lambda x, w: x.relu(), "sigmoid": lambda x, w: x.sigmoid(), "exp": lambda x, w: x.exp(),
            "tanh": lambda x, w: x.tanh(), "sin": lambda x, w: x.sin(), "square": lambda x, w: x ** 2,
            "mul": lambda x, w: x * w, "add": lambda x, w: x + w, "clone": lambda x, w: x.clone()}


def written(lines: list[str] | dict[str, str], make: Callable[[], torch.Tensor]) -> frozenset[str]:
    """The lines (by label) that, run on a fresh ``x = make()``, bump ``x._version``: a write into x."""
    lines = lines if isinstance(lines, dict) else {line: line for line in lines}
    return frozenset(label for label, code in lines.items() if snippet(code, "x._version", x=make())())


def error_of(code: str, **names: Any) -> str | None:
    """Run ``code``: None, or which of autograd's in-place errors it raised ("leaf" or "saved")."""
    try:
        snippet(code, "None", **names)()
    except RuntimeError as err:
        return inplace_error(err)
    return None


def after_write(op: Callable, line: str) -> str:
    """``y = op(x, w)``, ``line`` (which doubles y), backward: "error", or a "right" or "wrong gradient" for x."""
    x = torch.linspace(-2.0, 2.0, 5, requires_grad=True)
    w = torch.linspace(0.5, 1.5, 5, requires_grad=True)
    if error_of(line + "; y.sum().backward()", y=op(x, w)):
        return "error"
    meant, = torch.autograd.grad((2 * op(x, w)).sum(), x)
    return "right gradient" if torch.allclose(x.grad, meant, rtol=0, atol=1e-6) else "wrong gradient"


def _reads_only(answer, cases, what: str, expected, also=None, name: str = "x") -> bool | str:
    """``answer(x, *rest)`` must leave x alone and return ``expected(x, *rest)``; ``also(result, x)`` may object.
    The hints call x by ``name``, the parameter's name in the notebook."""
    for x, *rest in cases:
        before, state = x.detach().clone(), (x._version, x.requires_grad)
        want, got = expected(before, *rest), call_answer(answer, x, *rest)
        if (x._version, x.requires_grad) != state or not torch.equal(x.detach(), before):
            return _("your function wrote into {name} (its values or its version counter changed): an alias such "
                     "as identity = {name} would see that; it should only read {name}").format(name=name)
        if got.shape != want.shape:
            return _("for {name} of shape {shape} the result should have shape {wanted}").format(
                name=name, shape=tuple(x.shape), wanted=tuple(want.shape))
        if got.dtype != want.dtype or not torch.equal(got.detach(), want):
            return _("the result is not {what}").format(what=_(what))
        if also and (problem := also(got, x)):
            return problem
    return True


def _view(got: torch.Tensor, x: torch.Tensor) -> str | None:
    if not shares_storage(got, x):
        return "the values are right, but the result owns new memory: it is a copy, and a view was possible"


@function_exercise("01.1", "independent_copy",
                   "the result needs new memory AND no link to the autograd graph; the table of four spellings shows "
                   "which spelling gives both")
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
    return _reads_only(answer, cases, "a copy of t: the same values, shape and dtype", lambda x: x, unlinked, "t")


@function_exercise("02.1", "same_storage", "compare the storages themselves, not where each tensor's first element is")
def _same_storage(answer):
    base, meta = torch.arange(12.0), torch.empty(3, device="meta")
    grid = base.view(3, 4)
    view = "views (another tensor object, the same memory) share storage too"
    later = "a slice that starts later has another data_ptr() but lives in the same storage"
    own = "a clone, or a tensor made separately, has its own storage even when the values are equal"
    zero = ("right for ordinary tensors, but not for two separate {}: what is the data_ptr() of a tensor with no "
            "memory behind it, such as {}? Then ask what such a pointer can tell apart")
    empty = _(zero).format(_("empty tensors"), "torch.empty(0)")
    meta_slice = ("a slice of a meta tensor lives in its base's storage, though every data_ptr() on the meta device "
                  "is 0: compare the storage objects themselves")
    return tells_apart(answer, [
        ((base, base), True, view), ((grid, grid.t()), True, view), ((base, base[3:]), True, later),
        ((base[:4], base[8:]), True, later), ((grid[:, 1], base), True, later),
        ((base, base.view(torch.int32)), True, view),   # another dtype, the same bytes
        ((base, base.clone()), False, own), ((base, torch.arange(12.0)), False, own),
        ((base[3:], base.clone()[3:]), False, own),
        ((torch.empty(0), torch.empty(0)), False, empty),
        ((torch.zeros(2, 0), torch.empty(0)), False, empty),
        ((meta, meta[1:]), True, meta_slice), ((meta, torch.empty(3, device="meta")), False,
         _(zero).format(_("meta tensors"), 'torch.empty(3, device="meta")'))])


@function_exercise("02.2", "add_into",
                   "inside the function, x = ... only moves the local name x; write into the tensor that x names "
                   "instead")
def _add_into(answer):
    plain, base = torch.arange(4.0), torch.zeros(6)
    # (x, y, another view of x's elements); the second x is a view itself: the write must land in its base
    for x, y, other in [(plain, torch.arange(1.0, 5.0), plain[:]),
                        (base[::2], torch.tensor([1.0, 2.0, 3.0]), base[::2])]:
        x_before, y_before, storage = x.clone(), y.clone(), x.untyped_storage().data_ptr()
        call_answer(answer, x, y, returns=None)
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


function_exercise("03.2", "column", "look for an indexing form or a method that only changes shape, stride and offset",
                  lambda answer: _reads_only(answer, [(torch.arange(20.0).view(4, 5), 0),
                                                      (torch.arange(20.0).view(4, 5), 3),
                                                      (torch.arange(20.0).view(4, 5).t(), 2),
                                                      (torch.arange(6.0).view(2, 3), 2)],
                                             "column j of x", lambda x, j: x[:, j], _view))


@function_exercise("05.2", "fixed",
                   "leave sigmoid's output unchanged: make the doubled tensor a new one (an out-of-place op), not a "
                   "write into the old one")
def _fixed_sigmoid_double(answer):
    for data in [torch.tensor([-2.0, 0.0, 0.5, 3.0]), torch.randn(3, 4, generator=torch.Generator().manual_seed(5)),
                 torch.tensor(1.5)]:
        x, s = data.clone().requires_grad_(True), torch.sigmoid(data)
        out = call_answer(answer, x)
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


register(
    Exercise("01.2", hint="follow each of b, c, d, e back to a: which ones does autograd see as functions of a, and "
                          "which are constants?",
             form="three numbers, one per element of a",
             parse=numbers(3), truth=snippet(NOTEBOOK_CODE["01.2"], "tuple(a.grad.tolist())"),
             wrong_answers=lambda t: {
                 tuple(2 * v for v in t): "detach() cuts a tensor out of the graph: d and e are constants to autograd",
                 tuple(v / 2 for v in t): "clone() is differentiable and c is a itself: both factors of b * c depend "
                                          "on a",
                 (0.0,) * 3: "loss depends on a through b and c; a backward pass does reach a"}),
    Exercise("03.1", hint="a stride counts the storage elements you skip to move one step along a dimension; "
                          "permute reorders the dimensions, and each stride moves with its dimension",
             form="the strides as a tuple of three ints, like the one `t.stride()` returns",
             parse=numbers(3, integral=True), truth=lambda: torch.zeros(2, 3, 4).permute(2, 0, 1).stride(),
             wrong_answers=lambda t: {
                 torch.zeros(2, 3, 4).stride(): "those are the strides before permute; after permute, each stride "
                                                "follows its dimension",
                 torch.zeros(4, 2, 3).stride(): "those are the strides of a new contiguous tensor of shape (4, 2, 3); "
                                                "permute copies nothing, so it reuses x's strides in the new order"}),
    Exercise("04.1", hint="count the writes into a's storage; one line rebinds a name to a new tensor",
             form="the number of writes into a's memory, as an int", parse=whole,
             # the lines after which a._version moved (each write moves it, by at least one)
             truth=snippet("seen = []\n" + "".join(f"{line}\nseen.append(a._version)\n"
                                                   for line in NOTEBOOK_CODE["04.1"].splitlines()),
                           "sum(after > before for before, after in zip([0] + seen, seen))"),
             wrong_answers=lambda t: {v: "too many: after `b = b + 1`, the name b refers to a new tensor with its own "
                                         "counter, so writes into it do not count for a" if v > t else
                                         "too few: a view shares its base's version counter, so a write through c "
                                         "counts for a too" for v in range(t + 6)}),
    Exercise("04.2", hint="for each line ask: does it write into existing memory (which tensor's?), or make a new "
                          "tensor and at most move a name?",
             form='letters from A to H, as a string such as "AE" or a set such as {"A", "E"}',
             parse=choices(LINES_04_2),
             truth=lambda: written(LINES_04_2, lambda: torch.tensor([[1.0, -2.0], [3.0, -4.0]])),
             wrong_options={
                 "A": "`x = x * 2` makes a new tensor and moves the name x to it; the old tensor is not written",
                 "H": "a clone has its own memory, so writing into it leaves x alone",
                 "E": "`x.clamp(min=0)` has no trailing underscore: it returns a new tensor and only reads x",
                 **dict.fromkeys("DG", "a write through another tensor object that shares x's memory (a view, or "
                                       "a detached tensor) is a write into x too"),
                 **dict.fromkeys("BCF", "augmented assignment, index assignment and out= all write into an "
                                        "existing tensor")}),
    Exercise("05.1", hint="an op breaks when its backward formula needs its own output; saved_by_node(op(x)) shows "
                          "'result' for those",
             form='a set of op names, e.g. {"add", "clone"}', parse=choices(OPS_05_1),
             truth=lambda: frozenset(n for n, op in OPS_05_1.items() if after_write(op, "y.mul_(2)") == "error")),
)
