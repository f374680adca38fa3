"""Exercises of notebook 04 (in-place ops and mutability)."""

from __future__ import annotations

import torch

from clonelab.exercises import exercise, letters


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
def _check_04_1(answer):
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


# Exercise 04.2's lines: the text the notebook shows, and the same line as a function of x.
def _rebind_mul(x):
    x = x * 2  # noqa: F841  (rebinds the local name only)


def _imul(x):
    x *= 2


def _set_column(x):
    x[:, 0] = 0


def _zero_detached(x):
    y = x.detach()
    y.zero_()


def _zero_clone(x):
    y = x.clone()
    y.zero_()


LINES = {
    "A": ("x = x * 2", _rebind_mul),
    "B": ("x *= 2", _imul),
    "C": ("x[:, 0] = 0", _set_column),
    "D": ("x.t().add_(1)", lambda x: x.t().add_(1)),
    "E": ("x.clamp(min=0)", lambda x: x.clamp(min=0)),
    "F": ("torch.exp(x, out=x)", lambda x: torch.exp(x, out=x)),
    "G": ("y = x.detach(); y.zero_()", _zero_detached),
    "H": ("y = x.clone(); y.zero_()", _zero_clone),
}


def lines_that_write() -> set[str]:
    """Run every line of exercise 04.2 on a fresh x: the letters whose line bumped x._version."""
    writes = set()
    for letter, (_, line) in LINES.items():
        x = torch.tensor([[1.0, -2.0], [3.0, -4.0]])
        before = x._version
        line(x)
        if x._version != before:
            writes.add(letter)
    return writes


@exercise("04.2", hint="for each line ask: does it write into existing memory (which tensor's?), "
                       "or make a new tensor and at most move a name?")
def _check_04_2(answer):
    got = letters(answer, "".join(LINES))
    if got is None:
        return f"give letters from A to {max(LINES)}, as a string such as \"AE\" or a set such as {{\"A\", \"E\"}}"
    right = lines_that_write()
    if got == right:
        return True
    if "A" in got:
        return "`x = x * 2` makes a new tensor and moves the name x to it; the old tensor is not written"
    if "H" in got:
        return "a clone has its own memory, so writing into it leaves x alone"
    if "E" in got:
        return "`x.clamp(min=0)` has no trailing underscore: it returns a new tensor and only reads x"
    missing = right - got
    if missing & {"D", "G"}:
        return ("a write through another tensor object that shares x's memory (a view, or a detached tensor) "
                "is a write into x too")
    if missing & {"B", "C", "F"}:
        return "augmented assignment, index assignment and out= all write into an existing tensor"
    return False


@exercise("04.3", hint="compute the result out of place, or write into a copy; never into x")
def _check_04_3(answer):
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
            return ("x was written to (its values or its version counter changed): "
                    "an alias such as identity = x would see that")
        if not torch.equal(got, torch.relu(before)):
            return "the result is not relu(x)"
    return True
