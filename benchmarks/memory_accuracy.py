#!/usr/bin/env python3
"""How accurately can we see the memory a clone takes?

For clones of tensors from 4 B to 400 MB it prints: the true size (``x.nbytes``),
what ``clonelab.measure()`` reports (PyTorch's allocator, via the profiler),
what a memory_profiler RSS delta reports (the blog post's method), and the
error of each. Run: ``python benchmarks/memory_accuracy.py``.
"""

from __future__ import annotations

import gc
import platform

import torch

from clonelab import measure
from clonelab.rss import rss_bytes
from clonelab.workloads import clone_of

SIZES = [4, 64, 1024, 16 * 1024, 256 * 1024, 4 * 2**20, 64 * 2**20, 400 * 2**20]


def human(n: float) -> str:
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def one(nbytes: int) -> tuple[int, int, int]:
    x = torch.ones(nbytes // 4)  # written, so its pages are resident before we start
    with measure() as m:
        y = clone_of(x)
    del y
    gc.collect()
    before = rss_bytes()
    y = clone_of(x)
    after = rss_bytes()
    del x, y
    return nbytes, m.allocated, after - before


def main() -> None:
    torch.set_num_threads(1)  # one thread: thread pools allocate their own memory on first use
    one(1024)  # warm up the profiler and the allocator
    print(f"machine: {platform.machine()}, {platform.system()}, torch {torch.__version__}")
    print(f"{'tensor size':>12} {'true bytes':>12} {'measure()':>12} {'error':>8} {'RSS delta':>12} {'RSS error':>12}")
    for size in SIZES:
        true, exact, rss = one(size)
        print(f"{human(size):>12} {true:>12,} {exact:>12,} {exact - true:>8,} {rss:>12,} {human(rss - true):>12}")


if __name__ == "__main__":
    main()
