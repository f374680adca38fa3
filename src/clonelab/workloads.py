"""Functions to profile with memory_profiler, kept in a file because it needs their source.

``assign_tensor`` and ``clone_tensor`` are the blog post's ``copy_tensor``
experiment, its two variants side by side.
"""

from __future__ import annotations

import torch


def assign_tensor() -> torch.Tensor:
    """The post's experiment with ``b = a``: no new tensor."""
    a = torch.tensor([1], dtype=torch.float32)
    a.grad = torch.tensor([2], dtype=torch.float32)
    b = a
    return b


def clone_tensor() -> torch.Tensor:
    """The post's experiment with ``b = a.clone()``: 4 new bytes."""
    a = torch.tensor([1], dtype=torch.float32)
    a.grad = torch.tensor([2], dtype=torch.float32)
    b = a.clone()
    return b


def clone_of(x: torch.Tensor) -> torch.Tensor:
    """Clone ``x``: its cost is exactly ``x.nbytes`` new bytes, every page written."""
    return x.clone()


def empty_like_unwritten(x: torch.Tensor) -> torch.Tensor:
    """Allocate like ``x`` without writing: the OS maps pages only when they are touched."""
    return torch.empty_like(x)
