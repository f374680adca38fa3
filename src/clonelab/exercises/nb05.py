"""Exercises of notebook 05 (autograd meets in-place).

The checks compute the truth by running PyTorch, instead of comparing with a
typed-in answer, so they stay right if a release changes what an op saves.

>>> from clonelab import check
>>> bool(check("05.1", {"relu"}))  # doctest: +ELLIPSIS
✗ 05.1: not yet. Hint: ...
False
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Callable

import torch

from clonelab.exercises import exercise

# The ops of exercise 05.1, by the names the notebook lists.
_OPS: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "relu": lambda x, w: x.relu(),
    "sigmoid": lambda x, w: x.sigmoid(),
    "exp": lambda x, w: x.exp(),
    "tanh": lambda x, w: x.tanh(),
    "sin": lambda x, w: x.sin(),
    "square": lambda x, w: x ** 2,
    "mul": lambda x, w: x * w,
    "add": lambda x, w: x + w,
    "clone": lambda x, w: x.clone(),
}


def _inplace_breaks_backward(name: str) -> bool:
    """Does ``y = op(x); y.mul_(2); y.sum().backward()`` raise the version-counter error?"""
    x = torch.linspace(-1.0, 1.0, 5, requires_grad=True)
    w = torch.linspace(0.5, 1.5, 5, requires_grad=True)
    y = _OPS[name](x, w)
    y.mul_(2)
    try:
        y.sum().backward()
    except RuntimeError as err:
        if "modified by an inplace operation" in str(err):
            return True
        raise
    return False


@exercise("05.1", hint="an op breaks when its backward formula needs its own output; "
                       "saved_by_node(op(x)) shows 'result' for those")
def _ops_that_save_their_output(answer: Any) -> bool | str:
    if isinstance(answer, str) or not isinstance(answer, Iterable):
        return "answer with a set of op names, e.g. {\"relu\", \"add\"}"
    names = set()
    for item in answer:
        if not isinstance(item, str):
            return f"every item must be an op name (a str); got {item!r}"
        name = item.strip().lower()
        if name not in _OPS:
            return f"{item!r} is not one of the listed names: {', '.join(_OPS)}"
        names.add(name)
    truth = {name for name in _OPS if _inplace_breaks_backward(name)}
    if names == truth:
        return True
    if names - truth:
        return ("at least one op in your set keeps only its inputs or nothing, so writing into its "
                "output is fine; look at saved_by_node for each")
    return ("your set is missing at least one op; for each op left out, look for 'result' "
            "in saved_by_node(op(x))")


def _sample_inputs() -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(5)
    return [
        torch.tensor([-2.0, 0.0, 0.5, 3.0]),
        torch.randn(3, 4, generator=gen),
        torch.tensor(1.5),
    ]


@exercise("05.2", hint="leave sigmoid's output unchanged: make the doubled tensor a new one "
                       "(an out-of-place op), not a write into the old one")
def _fixed_sigmoid_double(answer: Any) -> bool | str:
    if not callable(answer):
        return "answer with a function, fixed(x), that returns a tensor"
    for data in _sample_inputs():
        x = data.clone().requires_grad_(True)
        s = torch.sigmoid(data)
        try:
            out = answer(x)
        except RuntimeError as err:
            return f"fixed(x) raised during the forward pass ({err})"
        if not isinstance(out, torch.Tensor):
            return f"fixed(x) must return a tensor, got {type(out).__name__}"
        if out.numel() != 1 or out.grad_fn is None:
            return "fixed(x) must return one number that autograd tracks back to x (like y.sum())"
        # float32 tolerance for a sum of a few terms
        if not torch.allclose(out.detach(), (2 * s).sum(), rtol=1e-5, atol=1e-6):
            return "the value is not (2 * sigmoid(x)).sum()"
        try:
            out.backward()
        except RuntimeError as err:
            if "modified by an inplace operation" in str(err):
                return "backward still raises: something sigmoid saved is still overwritten in place"
            return f"backward raised: {err}"
        if x.grad is None or not torch.allclose(x.grad, 2 * s * (1 - s), rtol=1e-5, atol=1e-6):
            return ("the value is right but the gradient is wrong: a write that autograd cannot see "
                    "(through .data or a NumPy array) hides the problem instead of fixing it")
    return True


@exercise("05.3", hint="turn gradient tracking off for the update, then change w's own memory "
                       "with an in-place op")
def _sgd_step(answer: Any) -> bool | str:
    if not callable(answer):
        return "answer with a function, step(w, lr)"
    for lr in (0.1, 0.5):
        w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (w ** 2).sum().backward()
        grad = w.grad.clone()
        before, ptr, version = w.detach().clone(), w.data_ptr(), w._version
        try:
            answer(w, lr)
        except RuntimeError as err:
            if "leaf Variable" in str(err):
                return "the update raised the leaf error: autograd is still recording it"
            return f"step raised: {err}"
        if torch.equal(w.detach(), before):
            return ("w did not change: step must write the new values into the tensor w itself "
                    "(doing nothing, or binding the name w to a new tensor inside step, leaves the "
                    "caller's w as it was)")
        if w.data_ptr() != ptr:
            return "w has new memory: the update must write into w's existing memory"
        if not torch.allclose(w.detach(), before - lr * grad, rtol=1e-6, atol=1e-7):
            return "w changed, but not to w - lr * w.grad"
        if not (w.is_leaf and w.requires_grad and w.grad_fn is None):
            return "after the step w must still be a leaf that requires grad"
        if w._version == version:
            return ("the values are right but w._version did not move: autograd cannot see this "
                    "write (the .data trap; a write through a NumPy array is the same)")
    return True
