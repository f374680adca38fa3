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
  (``torch.cuda.memory_stats``). They count whole blocks: small requests are
  rounded up to a multiple of 512 bytes, so a 4-byte clone shows as 512 here,
  while ``requested`` keeps the exact figure.

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
    ``requested`` (CUDA only): what the code asked for, before rounding.
    ``events`` (CPU only): ``(op, bytes)`` per allocation (+) and free (-).
    """

    device: str
    source: str
    allocated: int = 0
    freed: int = 0
    peak: int = 0
    requested: int | None = None
    events: list[tuple[str, int]] = field(default_factory=list)

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
# stops, and one for a free it cannot match ("Memory block of unknown size was
# allocated before the profiling started..."). In a notebook they would land in
# the cell output, so we drop them, and only them.
_PROFILER_NOISE = ("profiler_start", "profiler_stop", "Memory block of unknown size")


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
            kept = [line for line in capture.read().decode(errors="replace").splitlines(keepends=True)
                    if not any(noise in line for noise in _PROFILER_NOISE)]
            if kept:
                sys.stderr.write("".join(kept))


def _allocation_events(profiler) -> list[tuple[int, str, int, int]]:
    """(time, op, ptr, signed bytes) for every CPU allocation event, in time order."""
    from torch._C._profiler import _EventType

    found = []

    def walk(nodes, op):
        for node in nodes:
            if node.tag == _EventType.Allocation:
                fields = node.extra_fields
                if fields.device.type == "cpu":
                    found.append((node.start_time_ns, op, fields.ptr, fields.alloc_size))
            else:
                walk(node.children, node.name)

    walk(profiler.profiler.kineto_results.experimental_event_tree(), "(python)")
    return sorted(found, key=lambda e: e[0])


class measure:
    """Context manager: exact bytes allocated, freed and at peak inside the block.

    ``device`` is ``"cpu"`` (default) or ``"cuda"``. The report is filled in
    when the block ends. See the module docstring for how each device counts.

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
        self._start: dict[str, int] = {}

    def __enter__(self) -> MemoryReport:
        import torch

        if self.device.type == "cpu":
            from torch.profiler import ProfilerActivity, profile

            self._profiler = profile(activities=[ProfilerActivity.CPU], profile_memory=True)
            self._stderr = _filtered_stderr()
            self._stderr.__enter__()  # until __exit__: the block's frees can log lines too
            self._profiler.__enter__()
        else:
            torch.cuda.synchronize(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            self._start = torch.cuda.memory_stats(self.device)
        return self.report

    def __exit__(self, *exc) -> None:
        import torch

        r = self.report
        if self.device.type == "cpu":
            try:
                self._profiler.__exit__(*exc)
            finally:
                self._stderr.__exit__(None, None, None)
            live: dict[int, int] = {}  # ptr -> bytes, for blocks allocated inside the block
            current = 0
            for _, op, ptr, nbytes in _allocation_events(self._profiler):
                if nbytes > 0:
                    live[ptr] = nbytes
                elif ptr in live:  # a free we can match to an allocation we saw
                    nbytes = -live.pop(ptr)
                else:
                    continue
                r.events.append((op, nbytes))
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
            r.peak = end["allocated_bytes.all.peak"] - self._start["allocated_bytes.all.current"]


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
    (``_saved_self``, ``_saved_other``, ``_saved_result`` ...). Nodes that
    save no tensor get a row saying so. After ``backward()`` the saved
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
            try:
                value = getattr(node, attr)
            except RuntimeError:  # freed by backward()
                rows.append([name, attr[len("_saved_"):], "freed", "-", "-"])
                found = True
                continue
            if isinstance(value, torch.Tensor):
                rows.append([name, attr[len("_saved_"):], tuple(value.shape),
                             str(value.dtype).replace("torch.", ""), value.numel() * value.element_size()])
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


def rss_bytes() -> int:
    """This process's resident set size (RSS) now, in bytes, as memory_profiler reads it."""
    from memory_profiler import memory_usage

    return int(memory_usage(-1, interval=0.01, timeout=None, max_usage=True) * 2**20)
