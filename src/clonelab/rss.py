"""The blog post's instrument: memory_profiler's view of the process's resident set size (RSS), in MiB
(notebook 07). It sees pages the process touches, not tensors: compare it with :func:`clonelab.measure`."""

from __future__ import annotations

import io
import os
import re
from typing import Any, Callable


def rss_line_profile(func: Callable[..., Any], *args, **kwargs) -> str:
    """memory_profiler's line-by-line RSS report of ``func(*args, **kwargs)``, as text (notebook 07); ValueError
    unless ``func`` is defined in a file (``clonelab.workloads``), not a notebook cell.

    >>> from clonelab.workloads import clone_tensor
    >>> "b = a.clone()" in rss_line_profile(clone_tensor)
    True
    """
    import inspect

    from memory_profiler import LineProfiler, show_results
    path = inspect.getsourcefile(func)  # TypeError for what is not a function
    if path is None or not os.path.exists(path):
        raise ValueError(f"func must be defined in a file; {getattr(func, '__name__', func)!r} has no source file "
                         "(functions typed into a notebook cell cannot be profiled line by line)")
    profiler = LineProfiler(backend="psutil")
    profiler(func)(*args, **kwargs)
    out = io.StringIO()
    show_results(profiler, stream=out)
    here = os.path.dirname(__file__)  # a file of the package relative to it, another by its name: no machine's path
    return out.getvalue().replace(path, os.path.join("clonelab", os.path.relpath(path, here))
                                  if path.startswith(here + os.sep) else os.path.basename(path))


# One row of memory_profiler's report: line number, Mem usage, Increment, Occurrences, source.
_RSS_ROW = re.compile(r"^\s*\d+\s+(-?[\d.]+) MiB\s+(-?[\d.]+) MiB\s+\d+\s+(.*?)\s*$")


def rss_increments(report: str) -> list[tuple[str, float]]:
    """``(source line, Increment in MiB)`` per row of a :func:`rss_line_profile` report that ran, but the ``def`` line.

    >>> rss_increments("  20   245.1 MiB   245.1 MiB   1   def f():\\n  24   246.0 MiB   0.9 MiB   1   b = a.clone()")
    [('b = a.clone()', 0.9)]
    """
    rows = [m.groups() for m in map(_RSS_ROW.match, report.splitlines()) if m]
    return [(code, float(increment)) for _, increment, code in rows if not code.startswith("def ")]


def rss_bytes() -> int:
    """This process's resident set size (RSS) now, in bytes, as memory_profiler reads it.

    >>> rss_bytes() > 0
    True
    """
    from memory_profiler import memory_usage
    return int(memory_usage(-1, interval=0.01, timeout=None, max_usage=True) * 2**20)
