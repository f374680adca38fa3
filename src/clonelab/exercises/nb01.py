"""Exercises of notebook 01 (clone or assign).

>>> import torch
>>> from clonelab import check
>>> bool(check("01.1", lambda t: t))
✗ 01.1: not yet. Hint: your function returned the very object it was given: that is what `=` does, not a copy.
False
"""

from __future__ import annotations

from clonelab.exercises import exercise


def _inputs():
    """Fresh test tensors: a leaf that requires grad (with a .grad), a non-leaf, an integer view."""
    import torch

    leaf = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
    leaf.grad = torch.tensor([1.0, 2.0, 3.0])
    non_leaf = torch.tensor([1.0, -1.0], requires_grad=True) * 5
    integer = torch.arange(6).view(2, 3).t()  # not contiguous, int64
    return [("a leaf that requires grad", leaf), ("a non-leaf", non_leaf), ("an integer tensor", integer)]


@exercise("01.1", hint="the result needs new memory AND no link to the autograd graph; "
                       "the table of four spellings shows which spelling gives both")
def _check_01_1(answer):
    import torch

    if not callable(answer):
        return "answer must be a function that takes a tensor and returns a tensor"
    for label, x in _inputs():
        before = x.detach().clone()
        version, requires_grad = x._version, x.requires_grad
        result = answer(x)
        if result is ...:
            return "your function still returns ...: replace it with your code"
        if not isinstance(result, torch.Tensor):
            return f"for {label}, your function returned {type(result).__name__}, not a tensor"
        if result is x:
            return "your function returned the very object it was given: that is what `=` does, not a copy"
        if x._version != version or x.requires_grad != requires_grad or not torch.equal(x.detach(), before):
            return f"your function changed its input ({label}); leave the input alone"
        if result.shape != x.shape or result.dtype != x.dtype or not torch.equal(result.detach(), before):
            return f"for {label}, the copy must have the same values, shape and dtype as the input"
        if result.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
            return (f"for {label}, your result shares memory with the input, "
                    "so a write into one would show in the other")
        if result.requires_grad or result.grad_fn is not None:
            return f"for {label}, your result is still connected to the autograd graph (it requires grad)"
    return True


@exercise("01.2", hint="follow each of b, c, d, e back to a: which ones does autograd see as "
                       "functions of a, and which are constants?")
def _check_01_2(answer):
    import torch

    got = torch.as_tensor(answer, dtype=torch.float32)
    if got.shape != (3,):
        return "give three numbers, one per element of a"
    # work the answer out the same way the notebook does
    a = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
    b, c, d, e = a.clone(), a, a.detach(), a.detach().clone()
    (b * c + d * e).sum().backward()
    if torch.equal(got, a.grad):
        return True
    if torch.equal(got, 2 * a.grad):
        return "detach() cuts a tensor out of the graph: d and e are constants to autograd"
    if torch.equal(got, a.grad / 2):
        return ("clone() is differentiable and c is a itself: "
                "both factors of b * c depend on a")
    if torch.equal(got, torch.zeros(3)):
        return "loss depends on a through b and c; a backward pass does reach a"
    return False
