"""Exercise checks for notebook 08, the residual connection."""

from __future__ import annotations

import math

from clonelab.exercises import exercise, number

TOLERANCE = 1e-5  # absolute and relative, for float32 outputs and gradients


@exercise("08.1", hint="output = input + weight2 * weight1 * input; differentiate the loss "
                       "(output - 8.5) ** 2 with respect to weight1 by the chain rule")
def _skip_carries_input(answer):
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return "answer should be a tuple (output, weight1_grad)"
    output, grad = (number(v) for v in answer)
    if output is None or grad is None:
        return "both entries should be numbers"
    if not math.isclose(output, 7.0, abs_tol=1e-6):
        if math.isclose(output, 8.0, abs_tol=1e-6):
            return "8 is the post's model, where the skip carries feature; here it carries the input"
        return "the output is not right yet: the skip now adds the input, not feature"
    if not math.isclose(grad, -9.0, abs_tol=1e-6):
        if math.isclose(grad, -4.0, abs_tol=1e-6):
            return "-4 is the post's gradient; with the input on the skip, weight1 only reaches the output through the branch"
        return "the output is right; recompute weight1's gradient: d loss / d output changes too"
    return True


def _cases():
    """(name, make) pairs: make() returns (x, leaves) with x made one way, from seeded data."""
    import torch
    import torch.nn.functional as F

    def data():
        g = torch.Generator().manual_seed(8)
        return (torch.randn(2, 3, 5, 5, generator=g).requires_grad_(),
                (torch.randn(3, 3, 3, 3, generator=g) * 0.3).requires_grad_())

    def conv():
        z, k = data()
        return F.conv2d(z, k, padding=1), [z, k]

    def mul():
        z, _ = data()
        return z * 2.0, [z]

    def sigmoid():
        z, _ = data()
        return torch.sigmoid(z), [z]

    def relu():
        z, _ = data()
        return torch.relu(z), [z]

    def leaf():
        z, _ = data()
        return z, [z]

    # a sigmoid first: a clone-based answer then hears why clone does not help
    return [("x from a sigmoid", sigmoid), ("x from a conv", conv), ("x from a mul", mul),
            ("x from a relu", relu), ("x a leaf that requires grad", leaf)]


def _meant(x, w):
    import torch

    return x + w * torch.relu(x)


@exercise("08.2", hint="the trouble is the in-place write into x, not the name that points at it")
def _fixed_block(answer):
    import torch

    if not callable(answer):
        return "answer should be the function fixed_block itself (no parentheses)"
    for name, make in _cases():
        # the reference, on its own copy of the same data
        x_ref, leaves_ref = make()
        w_ref = torch.tensor(1.5, requires_grad=True)
        out_ref = _meant(x_ref, w_ref)
        out_ref.sum().backward()

        x, leaves = make()
        before = x.detach().clone()
        w = torch.tensor(1.5, requires_grad=True)
        try:
            out = answer(x, w)
            if not isinstance(out, torch.Tensor):
                return "fixed_block should return a tensor"
            out.sum().backward()
        except RuntimeError as err:
            if "leaf Variable" in str(err):
                return f"with {name}, your block raised at once: it writes into x in place"
            if "modified by an inplace operation" in str(err):
                return (f"with {name}, backward raised: autograd saved x, and the block wrote into it; "
                        "a clone of x for the skip does not stop that write")
            raise
        if not torch.equal(x.detach(), before):
            return f"with {name}, the caller's x was changed: the block must leave it alone"
        if out.shape != out_ref.shape or not torch.allclose(out, out_ref, rtol=TOLERANCE, atol=TOLERANCE):
            return f"with {name}, the output is not x + w * relu(x)"
        grads_ok = all(a.grad is not None and torch.allclose(a.grad, b.grad, rtol=TOLERANCE, atol=TOLERANCE)
                       for a, b in zip(leaves + [w], leaves_ref + [w_ref]))
        if not grads_ok:
            return f"with {name}, the output is right but the gradients are not"
    return True


_OUTCOMES = {"add": "silent", "exp": "backward error", "bn": "silent", "tanh": "backward error",
             "leaf": "immediate error", "mul": "silent"}


@exercise("08.3", hint='ask of each op: does its backward need its own output? Is x a leaf? '
                      'Use "silent", "backward error" or "immediate error"')
def _classify(answer):
    if not isinstance(answer, dict) or set(answer) != set(_OUTCOMES):
        return f"answer should be a dict with exactly the keys {sorted(_OUTCOMES)}"
    allowed = {"silent", "backward error", "immediate error"}
    given = {k: v.strip().lower() if isinstance(v, str) else v for k, v in answer.items()}
    bad = sorted(k for k, v in given.items() if v not in allowed)
    if bad:
        return f'every value should be "silent", "backward error" or "immediate error" (check {", ".join(bad)})'
    wrong = sum(given[k] != v for k, v in _OUTCOMES.items())
    if wrong:
        return f"{wrong} of the 6 are not right yet; the three rows of the table decide each one"
    return True
