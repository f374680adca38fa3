"""Small helpers that several modules share: a byte count as text, a dtype's name, a tensor's version, thread counts."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator


def format_bytes(n: float) -> str:
    """A byte count in binary units (B, KiB, MiB, GiB, TiB), as a short label.

    >>> format_bytes(4), format_bytes(1536), format_bytes(-2**20), format_bytes(0), format_bytes(2**20 - 1)
    ('4 B', '1.5 KiB', '-1 MiB', '0 B', '1024 KiB')
    """
    value = abs(float(n))
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            break
        value /= 1024
    text = f"{value:.0f}" if value >= 999.5 or value == int(value) else f"{value:.3g}"   # not 1.02e+03
    return f"{'-' if n < 0 else ''}{text} {unit}"


def dtype_name(dtype) -> str:
    """A dtype without its ``torch.`` prefix: ``float32`` for ``torch.float32``."""
    return str(dtype).removeprefix("torch.")


def version_of(t) -> int | None:
    """``t._version``, or None for an inference tensor (it carries no version counter)."""
    try:
        return t._version
    except RuntimeError:
        return None


@contextmanager
def intra_op_threads(n: int | None) -> Iterator[None]:
    """Use ``n`` CPU threads inside ops for a while, then restore the old setting (None: leave it)."""
    import torch
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
