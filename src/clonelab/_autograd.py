"""Reading an autograd graph: its backward nodes, and what each one saved. Imports nothing from clonelab."""

from __future__ import annotations

from typing import Any


def require_graph(output: Any, argname: str = "output") -> None:
    """TypeError unless ``output`` is a tensor, ValueError unless it has a ``grad_fn``; both name ``argname``."""
    import torch
    if not isinstance(output, torch.Tensor):
        raise TypeError(f"{argname} must be a torch.Tensor made by autograd-tracked ops (e.g. a loss); "
                        f"got {type(output).__name__}")
    if output.grad_fn is None:
        why = ("it is a leaf tensor (you created it; no op made it)" if output.requires_grad else "it does not "
               "require grad: made under torch.no_grad(), or from tensors without requires_grad=True")
        raise ValueError(f"{argname} has no grad_fn, so there is no autograd graph: {why}")


def backward_nodes(output: Any) -> list:
    """Every backward node reachable from ``output.grad_fn``, once each, depth-first (a leaf: its ``AccumulateGrad``).

    >>> import torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> [type(node).__name__ for node in backward_nodes((w * 2).relu())]
    ['ReluBackward0', 'MulBackward0', 'AccumulateGrad']
    """
    require_graph(output)
    nodes, seen, stack = [], set(), [output.grad_fn]
    while stack:  # a stack, not recursion: a deep network's graph can be deeper than Python's recursion limit
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            nodes.append(node)
            stack.extend(reversed([f for f, _ in node.next_functions]))  # reversed: the first input first
    return nodes


FREED, MODIFIED = "freed by backward()", "modified in place"   # why a saved tensor cannot be read back


def saved_tensors(node: Any) -> list[tuple[str, Any]]:
    """``(name, tensor)`` for each tensor ``node`` saved for backward (its ``_saved_*`` attributes).

    A tuple gives a pair per tensor (``indices[0]``); one that cannot be read back gives ``FREED`` or ``MODIFIED``.

    >>> import torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> [name for name, _ in saved_tensors((w * w).grad_fn)]
    ['other', 'self']
    """
    import torch
    found = []
    for name in (a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_")):
        try:
            value = getattr(node, "_saved_" + name)
        except RuntimeError as err:  # the two errors autograd gives for a saved tensor it cannot unpack
            found.append((name, MODIFIED if "modified by an inplace operation" in str(err) else FREED))
            continue
        if isinstance(value, (tuple, list)):
            found += [(f"{name}[{i}]", v) for i, v in enumerate(value) if isinstance(v, torch.Tensor)]
        elif isinstance(value, torch.Tensor):
            found.append((name, value))
    return found


def where_it_raises(run: Any) -> tuple[str, str]:
    """Call ``run()``, then backward from the sum of what it returns (if that requires grad): where a RuntimeError
    came, "at the write" (any RuntimeError inside ``run``), "at backward" or "no error", and its message.
    Notebooks 05, 08 and 10.

    >>> import torch; w = torch.ones(3, requires_grad=True)
    >>> where_it_raises(lambda: w.add_(1))[0], where_it_raises(lambda: w.exp().mul_(2))[0]
    ('at the write', 'at backward')
    """
    import torch
    if not callable(run):
        raise TypeError(f"run must be a function of no arguments that returns a tensor; got {type(run).__name__}")
    try:
        out = run()
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"run() must return a tensor to call backward from; it returned {type(out).__name__}")
    except RuntimeError as err:
        return "at the write", str(err)
    try:
        if out.requires_grad:
            out.sum().backward()
    except RuntimeError as err:
        return "at backward", str(err)
    return "no error", ""
