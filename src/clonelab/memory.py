"""Exact memory accounting: bytes allocated, freed and at peak; bytes saved for backward.

Two ways to count, chosen per device:

* **CPU**: ``torch.profiler`` with ``profile_memory=True``. PyTorch's CPU
  allocator reports every allocation and free (exact requested bytes, with the
  op that asked for it) to the profiler. We chose it over counting the outputs
  that :func:`clonelab.watch_ops` sees because it also sees temporaries made
  *inside* an op (a scalar wrapped as a tensor, a convolution's workspace) and
  every free, so the peak is real. One limit: it can only match a free to an
  allocation it saw, so memory allocated *before* the block and freed inside
  it is not counted.
* **CUDA**: the caching allocator's own statistics
  (``torch.cuda.memory_stats``). They count the blocks the allocator hands
  out, not the bytes asked for. It rounds every request up to a multiple of
  512 bytes, so a 4-byte clone shows as 512 here. A block can be larger still:
  for a request over 1 MiB it splits a bigger free block only when more than
  1 MiB would remain, so it may hand out up to about 1 MiB more than the
  rounded request. ``requested`` keeps the exact figure asked for. (Rules of
  ``c10/cuda/CUDACachingAllocator.cpp`` with its default settings.)

``measure`` blocks can be nested: each one counts its own window, the outer
one including what happened inside the inner one.

>>> import torch
>>> from clonelab import measure
>>> x = torch.ones(1000)
>>> with measure() as m:
...     y = x.clone()
>>> m.allocated, m.freed, m.peak
(4000, 0, 4000)
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

from clonelab._checks import require_tensor, storage_key
from clonelab._table import Table


@dataclass
class MemoryReport:
    """What :func:`measure` saw. All figures are bytes.

    ``allocated``: allocated inside the block. ``freed``: of that, freed inside
    the block (CPU), or everything freed (CUDA). ``peak``: the most that was
    live at once, above the level at the start. ``net``: allocated - freed.
    On CPU, frees of memory allocated before the block are ignored, so ``net``
    is what the block allocated and still holds at its end: ``del`` of an older
    tensor inside the block does not lower it. On CUDA every free counts.
    ``requested`` (CUDA only): what the code asked for, before rounding.
    ``events`` (CPU only): ``(op, bytes)`` per allocation (+) and free (-).
    ``trace`` (CPU only): the same events as ``(op, root op, address, bytes)``; the root op is
    the outermost op above the allocation (the one called from Python, or
    ``autograd::engine...`` in backward), and a free has the address of its allocation.
    """

    device: str
    source: str
    allocated: int = 0
    freed: int = 0
    peak: int = 0
    requested: int | None = None
    events: list[tuple[str, int]] = field(default_factory=list)
    trace: list[tuple[str, str, int, int]] = field(default_factory=list, repr=False)

    @property
    def net(self) -> int:
        return self.allocated - self.freed

    def table(self) -> Table:
        """One row per allocation (+bytes) and free (-bytes), in order, with the op responsible."""
        return Table(["op", "bytes"], [list(e) for e in self.events],
                     title=f"memory events on {self.device} ({self.source})")

    def __str__(self) -> str:
        extra = f", requested={self.requested:,}" if self.requested is not None else ""
        return (f"{self.device}: allocated={self.allocated:,} B, freed={self.freed:,} B, "
                f"peak={self.peak:,} B, net={self.net:,} B{extra}  [{self.source}]")

    __repr__ = __str__


# Lines the profiler's C++ layer writes straight to stderr: one when it starts and
# stops, one for a free it cannot match ("Memory block of unknown size was
# allocated before the profiling started..."), and, from a CUDA build of torch on
# a machine without a GPU, one as it probes for GPUs ("ERROR:...
# DeviceProperties.cpp:56] gpuGetDeviceCount failed with code 35"). In a notebook
# they would land in the cell output, so we drop them, and only them.
_PROFILER_NOISE = ("profiler_start", "profiler_stop", "Memory block of unknown size",
                   "gpuGetDeviceCount failed",              # a CUDA build on a machine without a GPU
                   "ActivityProfilerController.cpp")        # torch 2.3: "STAGE:... Completed Stage: Warm Up"


def _drop_profiler_noise(text: str) -> str:
    """``text`` without the lines of ``_PROFILER_NOISE``; every other line is kept."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if not any(noise in line for noise in _PROFILER_NOISE))


@contextlib.contextmanager
def _filtered_stderr():
    """Capture file descriptor 2, then pass on everything but the profiler's own lines."""
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            kept = _drop_profiler_noise(capture.read().decode(errors="replace"))
            if kept:
                sys.stderr.write(kept)


def _allocation_events(profiler) -> list[tuple[str, str, int, int]]:
    """(op, root op, ptr, signed bytes) for every CPU allocation event, in time order.

    ``op`` is the op that allocated or freed; ``root`` the outermost op above it
    (the one called from Python, or ``autograd::engine...`` during backward).
    """
    from torch._C._profiler import _EventType

    found = []

    def walk(nodes, op, root):
        for node in nodes:
            if node.tag == _EventType.Allocation:
                fields = node.extra_fields
                if fields.device.type == "cpu":
                    found.append((node.start_time_ns, op, root, fields.ptr, fields.alloc_size))
            else:
                walk(node.children, node.name, root or node.name)

    walk(profiler.profiler.kineto_results.experimental_event_tree(), "(python)", None)
    return [event[1:] for event in sorted(found, key=lambda e: e[0])]


# The measure() blocks now open, outermost first. PyTorch runs one profiler at a
# time, so only the innermost CPU block's profiler runs: a block that opens inside
# another pauses the outer one's profiler, and when it ends, it hands its events
# to the outer block and restarts the outer one's profiler. On CUDA an inner
# block resets the peak statistic, so it first saves the peak so far for the
# blocks around it.
_open: list[measure] = []


class measure:
    """Context manager: exact bytes allocated, freed and at peak inside the block.

    ``device`` is ``"cpu"`` (default) or ``"cuda"``. The report is filled in
    when the block ends. See the module docstring for how each device counts.
    ``net`` is allocated - freed. On CPU, frees of memory allocated before the
    block are ignored: deleting an older tensor inside the block lowers
    neither ``freed`` nor ``net``. Blocks can be nested (``train`` and
    ``model_clone_cost`` use one inside): each reports its own window.

    >>> import torch
    >>> x = torch.ones(256)
    >>> with measure() as m:
    ...     y = x * 2      # 1024 B for y, plus 8 + 4 B while the scalar 2 becomes a tensor
    ...     del y
    >>> m.allocated, m.freed, m.net, m.peak
    (1036, 1036, 0, 1036)
    """

    def __init__(self, device: Any = "cpu"):
        import torch

        try:
            self.device = torch.device(device)
        except (RuntimeError, TypeError):
            raise ValueError(f"device must be 'cpu' or 'cuda' (or a torch.device), got {device!r}") from None
        if self.device.type not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("device='cuda' needs a CUDA GPU, and torch.cuda.is_available() is False here")
        self.report = MemoryReport(
            device=str(self.device),
            source="torch.profiler memory events" if self.device.type == "cpu"
            else "CUDA caching allocator statistics",
        )
        self._profiler = None
        self._events: list[tuple[str, str, int, int]] = []  # CPU: (op, root op, ptr, signed bytes)
        self._start: dict[str, int] = {}
        self._peak_seen = 0  # CUDA: the peak statistic before an inner block reset it
        if self.device.type == "cuda":  # which GPU's statistics: "cuda" means the current one
            self._gpu = self.device.index if self.device.index is not None else torch.cuda.current_device()

    def __enter__(self) -> MemoryReport:
        import torch

        if self.device.type == "cpu":
            self._stderr = _filtered_stderr()
            self._stderr.__enter__()  # until __exit__: the block's frees can log lines too
            outer = self._outer()
            if outer is not None:
                outer._pause()
            _open.append(self)
            self._events = []
            self._resume()
        else:
            torch.cuda.synchronize(self.device)
            for block in _open:
                if block.device.type == "cuda" and block._gpu == self._gpu:
                    block._peak_seen = max(block._peak_seen, torch.cuda.max_memory_allocated(self.device))
            _open.append(self)
            torch.cuda.reset_peak_memory_stats(self.device)
            self._start = torch.cuda.memory_stats(self.device)
        return self.report

    def _outer(self) -> measure | None:
        """The innermost open block on the same device, around this one."""
        return next((block for block in reversed(_open) if block.device == self.device), None)

    def _resume(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        self._profiler = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
        self._profiler.__enter__()

    def _pause(self) -> None:
        self._profiler.__exit__(None, None, None)
        self._events += _allocation_events(self._profiler)

    def __exit__(self, *exc) -> None:
        import torch

        r = self.report
        _open.remove(self)
        if self.device.type == "cpu":
            try:
                self._pause()
                outer = self._outer()
                if outer is not None:
                    outer._events += self._events
                    outer._resume()
            finally:
                self._stderr.__exit__(None, None, None)
            live: dict[int, int] = {}  # ptr -> bytes, for blocks allocated inside the block
            current = 0
            for op, root, ptr, nbytes in self._events:
                if nbytes > 0:
                    live[ptr] = nbytes
                elif ptr in live:  # a free we can match to an allocation we saw
                    nbytes = -live.pop(ptr)
                else:
                    continue
                r.events.append((op, nbytes))
                r.trace.append((op, root, ptr, nbytes))
                current += nbytes
                r.allocated += max(nbytes, 0)
                r.freed += max(-nbytes, 0)
                r.peak = max(r.peak, current)
        else:
            torch.cuda.synchronize(self.device)
            end = torch.cuda.memory_stats(self.device)
            r.allocated = end["allocated_bytes.all.allocated"] - self._start["allocated_bytes.all.allocated"]
            r.freed = end["allocated_bytes.all.freed"] - self._start["allocated_bytes.all.freed"]
            r.requested = end["requested_bytes.all.allocated"] - self._start["requested_bytes.all.allocated"]
            peak = max(end["allocated_bytes.all.peak"], self._peak_seen)
            r.peak = peak - self._start["allocated_bytes.all.current"]


@dataclass
class SavedReport:
    """What autograd saved for backward while a function ran.

    ``tensors``: one entry per saved tensor (as autograd packed it);
    ``nbytes``: bytes of the distinct storages behind them, each counted once;
    ``result``: what the function returned.
    """

    result: Any
    tensors: list[dict[str, Any]]
    nbytes: int

    def table(self) -> Table:
        cols = ["shape", "dtype", "tensor_bytes", "storage_bytes", "storage"]
        return Table(cols, [[t[c] for c in cols] for t in self.tensors],
                     title=f"{len(self.tensors)} saved tensors, {self.nbytes:,} bytes in distinct storages")

    def __str__(self) -> str:
        return str(self.table())

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def saved_for_backward(fn: Callable[..., Any], *args, **kwargs) -> SavedReport:
    """Run ``fn(*args, **kwargs)`` and count what autograd saves for backward.

    Uses ``torch.autograd.graph.saved_tensors_hooks``: autograd calls our pack
    hook for every tensor it keeps. We record it and hand it back unchanged, so
    the values are not altered. Storages are counted once each, since two saved
    tensors on one storage keep one buffer alive.

    Two things to know. Python numbers that an op wraps as 0-d tensors (the
    ``2`` in ``x * 2``) are saved without passing through the hooks, so they
    are not counted. And autograd skips its in-place version check for tensors
    packed by hooks: a graph built inside this function will not raise the
    "modified by an inplace operation" error. Use it to count, not to test
    in-place safety.

    >>> import torch
    >>> x = torch.randn(100, requires_grad=True)
    >>> saved_for_backward(torch.sigmoid, x).nbytes   # sigmoid keeps its output
    400
    >>> saved_for_backward(lambda t: t + 1, x).nbytes  # add keeps nothing
    0
    """
    import torch

    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    entries: list[dict[str, Any]] = []
    keys: dict[int, str] = {}

    def pack(t):
        key = storage_key(t)
        label = keys.setdefault(key, f"s{len(keys)}")
        entries.append({
            "shape": tuple(t.shape),
            "dtype": str(t.dtype).replace("torch.", ""),
            "tensor_bytes": t.numel() * t.element_size(),
            "storage_bytes": t.untyped_storage().nbytes(),
            "storage": label,
        })
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn(*args, **kwargs)
    distinct = {e["storage"]: e["storage_bytes"] for e in entries}
    return SavedReport(result=result, tensors=entries, nbytes=sum(distinct.values()))


def saved_by_node(output) -> Table:
    """For every node of the autograd graph behind ``output``: what it saved.

    Reads the ``_saved_*`` attributes that PyTorch exposes on each node
    (``_saved_self``, ``_saved_other``, ``_saved_result`` ...). A tuple or list
    of tensors gets a row per tensor (``x[idx]`` saves ``indices[0]``). Nodes
    that save no tensor get a row saying so. After ``backward()`` the saved
    tensors are freed, and the rows say ``freed``.

    >>> import torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> t = saved_by_node((w * 2).relu())
    >>> [(r["node"], r["saved"]) for r in t]
    [('ReluBackward0', 'result'), ('MulBackward0', 'other'), ('AccumulateGrad', '(nothing)')]
    """
    import torch

    require_tensor(output, "output")
    if output.grad_fn is None:
        raise ValueError("output has no grad_fn: it is a leaf, or was computed without requires_grad or under no_grad")
    rows, seen, stack = [], set(), [output.grad_fn]
    while stack:  # depth-first from the output, each node once
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        name = type(node).__name__
        found = False
        for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
            saved = attr[len("_saved_"):]
            try:
                value = getattr(node, attr)
            except RuntimeError:  # freed by backward()
                rows.append([name, saved, "freed", "-", "-"])
                found = True
                continue
            if isinstance(value, (tuple, list)):  # e.g. the indices of x[idx]
                tensors = [(f"{saved}[{i}]", v) for i, v in enumerate(value) if isinstance(v, torch.Tensor)]
            else:
                tensors = [(saved, value)] if isinstance(value, torch.Tensor) else []
            for label, t in tensors:
                rows.append([name, label, tuple(t.shape), str(t.dtype).replace("torch.", ""),
                             t.numel() * t.element_size()])
                found = True
        if not found:
            rows.append([name, "(nothing)", "-", "-", 0])
        stack.extend(reversed([f for f, _ in node.next_functions]))
    return Table(["node", "saved", "shape", "dtype", "bytes"], rows)


def rss_line_profile(func: Callable[..., Any], *args, **kwargs) -> str:
    """memory_profiler's line-by-line RSS report of ``func(*args, **kwargs)``, as text.

    This is what ``@profile`` printed in the original blog post. memory_profiler
    reads the source of ``func`` from its file, so ``func`` must live in a file
    (``clonelab.workloads`` holds the post's functions), not in a notebook cell.

    >>> from clonelab.workloads import clone_tensor
    >>> report = rss_line_profile(clone_tensor)
    >>> "b = a.clone()" in report
    True
    """
    import inspect as _inspect

    from memory_profiler import LineProfiler, show_results

    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    try:
        path = _inspect.getsourcefile(func)
    except TypeError:
        path = None
    if path is None or not os.path.exists(path):
        raise ValueError(f"func must be defined in a file; {getattr(func, '__name__', func)!r} has no source file "
                         "(functions typed into a notebook cell cannot be profiled line by line)")
    profiler = LineProfiler(backend="psutil")
    profiler(func)(*args, **kwargs)
    out = io.StringIO()
    show_results(profiler, stream=out)
    # Show the file relative to the package, not this machine's absolute path.
    short = os.path.join("clonelab", os.path.relpath(path, os.path.dirname(__file__)))
    return out.getvalue().replace(path, short)


# One row of memory_profiler's report: line number, Mem usage, Increment, Occurrences, source.
_RSS_ROW = re.compile(r"^\s*\d+\s+(-?[\d.]+) MiB\s+(-?[\d.]+) MiB\s+\d+\s+(.*?)\s*$")


def rss_increments(report: str) -> list[tuple[str, float]]:
    """The rows of a :func:`rss_line_profile` report as ``(source line, Increment in MiB)``.

    The report's first row (the ``def`` line) is left out: its "increment" is
    the whole process's RSS when the function starts, not a change. Lines that
    did not run (the docstring) have no increment and are left out too.

    >>> report = '''
    ... Line #    Mem usage    Increment  Occurrences   Line Contents
    ... =============================================================
    ...     20    245.1 MiB    245.1 MiB           1   def clone_tensor():
    ...     21                                             # a comment
    ...     22    245.1 MiB      0.0 MiB           1       a = torch.tensor([1.0])
    ...     24    246.0 MiB      0.9 MiB           1       b = a.clone()
    ... '''
    >>> rss_increments(report)
    [('a = torch.tensor([1.0])', 0.0), ('b = a.clone()', 0.9)]
    """
    if not isinstance(report, str):
        raise TypeError(f"report must be the text that rss_line_profile returns, got {type(report).__name__}")
    rows = [m.groups() for m in map(_RSS_ROW.match, report.splitlines()) if m]
    return [(code, float(increment)) for _, increment, code in rows if not code.startswith("def ")]


def rss_bytes() -> int:
    """This process's resident set size (RSS) now, in bytes, as memory_profiler reads it.

    >>> rss_bytes() > 0
    True
    """
    from memory_profiler import memory_usage

    return int(memory_usage(-1, interval=0.01, timeout=None, max_usage=True) * 2**20)
