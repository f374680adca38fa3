"""Exercises of notebook 04 (in-place ops and mutability)."""

from __future__ import annotations

import torch

from clonelab.exercises import exercise
from clonelab.watch import watch_ops


def _version_puzzle() -> int:
    """The code of exercise 04.1, run for real: the answer is whatever torch says."""
    a = torch.zeros(3)
    b = a
    c = a[1:]
    a += 1
    c.mul_(2)
    b = b + 1
    b.add_(1)
    return a._version


@exercise("04.1", hint="count the writes into a's storage; one line rebinds a name to a new tensor")
def _(answer):
    if isinstance(answer, bool) or not isinstance(answer, int):
        return "give the version as an int"
    right = _version_puzzle()
    if answer > right:
        return ("too many: after `b = b + 1`, the name b refers to a new tensor with its own counter, "
                "so writes into it do not count for a")
    if answer < right:
        return "too few: a view shares its base's version counter, so a write through c counts for a too"
    return True


def _pair(seed: int, n: int = 5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, generator=g), torch.randn(n, generator=g)


@exercise("04.2", hint="use an operation that writes the sum into out's own memory, without making a temporary tensor")
def _(answer):
    if not callable(answer):
        return "answer should be a function add_into(out, identity)"
    for seed in (0, 1):
        out, identity = _pair(seed)
        out_before, identity_before = out.clone(), identity.clone()
        expected = out_before + identity_before
        with watch_ops(out=out, identity=identity) as log:
            returned = answer(out, identity)
        if returned is not None and returned is not out:
            return "return nothing, or out itself: the caller's out tensor should hold the sum"
        if not torch.equal(identity, identity_before):
            return "identity changed; only out should be written"
        if torch.equal(out, out_before):
            return ("the caller's out still holds its old values; remember that `out = ...` inside "
                    "a function only rebinds the local name")
        if not torch.equal(out, expected):
            return "out was written, but it does not hold out + identity"
        if log.new_bytes:
            return (f"out holds the sum, but {log.new_bytes} bytes of new memory were allocated on the way "
                    "(a temporary result)")
    return True


@exercise("04.3", hint="compute the result out of place, or write into a copy; never into x")
def _(answer):
    if not callable(answer):
        return "answer should be a function safe_relu(x)"
    for seed in (0, 1):
        x, _ = _pair(seed, 8)
        alias = x
        before, version = x.clone(), x._version
        got = answer(x)
        if not isinstance(got, torch.Tensor):
            return "safe_relu(x) should return a tensor"
        if x._version != version or not torch.equal(alias, before):
            return "x was written to (its version counter moved): an alias such as identity = x would see that"
        if not torch.equal(got, torch.relu(before)):
            return "the result is not relu(x)"
    return True
