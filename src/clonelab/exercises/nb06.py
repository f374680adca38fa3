"""Exercises of notebook 06 (drawing autograd graphs).

Each check builds the graph itself and compares node counts or tensors, so any
code that gives the right graph or names the right tensor passes.

>>> from clonelab import check
>>> bool(check("06.2", "weight1"))  # doctest: +ELLIPSIS
✗ 06.2: not yet. Hint: ...
False
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch

from clonelab.exercises import exercise

_TARGET_06_1 = Counter({"AccumulateGrad": 2, "MulBackward0": 1, "SigmoidBackward0": 1, "SumBackward0": 1})


@exercise("06.1", hint="read the Counter as a recipe: two leaves, one multiplication, one sigmoid, "
                       "one sum; graph_nodes(make(a, b)) shows what you built")
def _graph_from_counts(answer: Any) -> bool | str:
    from clonelab.graphs import graph_nodes

    if not callable(answer):
        return "answer with a function, make(a, b), that returns a tensor"
    for shape in [(4,), (2, 2)]:
        a = torch.linspace(0.1, 0.9, 4).reshape(shape).requires_grad_(True)
        b = torch.linspace(-1.0, 1.0, 4).reshape(shape).requires_grad_(True)
        out = answer(a, b)
        if not isinstance(out, torch.Tensor):
            return f"make(a, b) must return a tensor, got {type(out).__name__}"
        if out.grad_fn is None:
            return "the result has no grad_fn: build it from a and b with ops autograd records"
        got = graph_nodes(out)
        if got != _TARGET_06_1:
            extra, missing = got - _TARGET_06_1, _TARGET_06_1 - got
            parts = []
            if extra:
                parts.append("your graph has extra nodes: " + ", ".join(f"{n} x{k}" for n, k in extra.items()))
            if missing:
                parts.append("it lacks: " + ", ".join(f"{n} x{k}" for n, k in missing.items()))
            return "; ".join(parts)
    return True


def _toy_fields() -> tuple[Any, list[str]]:
    import dataclasses

    from clonelab.models import toy_residual

    r = toy_residual("clone", backward=False)
    return r, [f.name for f in dataclasses.fields(r)]


@exercise("06.2", hint="draw the graph with show_saved=True and follow the plain line from the second "
                       "MulBackward0 to its 'other' box; or compare that node's _saved_other with `is`")
def _saved_other(answer: Any) -> bool | str:
    if not isinstance(answer, str):
        return "answer with the name of a field as a string, e.g. \"weight1\""
    r, fields = _toy_fields()
    name = answer.strip()
    if name not in fields:
        return f"{answer!r} is not a field of the toy model; the fields are {', '.join(fields)}"
    saved = r.feature2.grad_fn._saved_other
    return getattr(r, name) is saved


@exercise("06.3", hint="a node is recorded only for an op on a tensor that requires grad; "
                       "compare graph_nodes of the two blocks' outputs")
def _clone_nodes_in_block(answer: Any) -> bool | str:
    from clonelab.graphs import graph_nodes
    from clonelab.models import BasicBlock

    if isinstance(answer, bool) or not isinstance(answer, int):
        return "answer with a whole number (an int), such as the result of graph_nodes(...)[...]"
    # fork_rng: building the blocks draws random weights; leave the reader's RNG state alone
    with torch.random.fork_rng(devices=[]):
        x = torch.randn(1, 4, 5, 5)
        extra = (graph_nodes(BasicBlock(4, 4, identity="clone")(x).sum())
                 - graph_nodes(BasicBlock(4, 4)(x).sum()))
    return answer == extra["CloneBackward0"]
