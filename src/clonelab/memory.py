"""Exact memory accounting (notebooks 04-09): bytes allocated, freed and at peak; bytes saved for backward.
memory_profiler's RSS view, for comparison, is in :mod:`clonelab.rss`."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import torch
from torch._C._profiler import _EventType

from clonelab._autograd import backward_nodes, saved_tensors
from clonelab._checks import storage_key
from clonelab._table import Table
from clonelab._util import dtype_name


@dataclass
class MemoryReport:
    """What :func:`measure` saw, in bytes: ``allocated``, ``freed`` (CPU: of those), ``peak`` (the most bytes of the
    block's own allocations alive at once; CUDA: above the start), ``net`` = allocated - freed (CPU: frees of memory
    allocated before the block lower neither ``net`` nor ``peak``), ``requested`` (CUDA: before rounding). CPU only:
    ``trace``, ``(op, root op, address, bytes)`` per allocation (+) and free (-), the root op the one called from
    Python (``autograd::engine...`` in backward); ``events``, its ``(op, bytes)``; ``peak_at``, the ``trace`` index
    where the peak was first reached; ``backward_start``, that of the first event under autograd's engine (or None)."""

    device: str
    allocated: int = 0
    freed: int = 0
    peak: int = 0
    requested: int | None = None
    peak_at: int | None = None
    trace: list[tuple[str, str | None, int, int]] = field(default_factory=list, repr=False)

    @property
    def net(self) -> int:
        return self.allocated - self.freed

    @property
    def backward_start(self) -> int | None:
        return next((i for i, (_, root, _, _) in enumerate(self.trace) if (root or "").startswith("autograd::engine")),
                    None)

    @property
    def events(self) -> list[tuple[str, int]]:
        return [(op, nbytes) for op, _, _, nbytes in self.trace]

    def table(self) -> Table:
        """One row per allocation (+bytes) and free (-bytes), in order, with the op responsible."""
        return Table(["op", "bytes"], self.events, title=f"memory events on {self.device}")

    def __repr__(self) -> str:
        extra = f", requested={self.requested:,}" if self.requested is not None else ""
        return (f"{self.device}: allocated={self.allocated:,} B, freed={self.freed:,} B, "
                f"peak={self.peak:,} B, net={self.net:,} B{extra}")


class Allocation(NamedTuple):
    op: str
    root: str | None
    nbytes: int
    start: int
    end: int | None


def allocation_lifetimes(report: MemoryReport) -> list[Allocation]:
    """Every allocation in a CPU :func:`measure` report's ``trace``, in order, as ``Allocation(op, root, nbytes,
    start, end)``: ``start`` and ``end`` index it and its free there (``end`` None: alive at the end of the block).

    >>> x = torch.ones(100)
    >>> with measure() as m:
    ...     c = x.clone(); y = c + c; del c
    >>> [(a.root, a.nbytes, a.start, a.end) for a in allocation_lifetimes(m)]
    [('aten::clone', 400, 0, 2), ('aten::add', 400, 1, None)]
    """
    lives, holder = [], {}  # holder: address -> index in lives of the allocation that holds it now
    for i, (op, root, address, nbytes) in enumerate(report.trace):
        if nbytes > 0:
            holder[address] = len(lives)
            lives.append(Allocation(op, root, nbytes, i, None))
        else:  # every free in a trace has its allocation there
            k = holder.pop(address)
            lives[k] = lives[k]._replace(end=i)
    return lives


# Lines the profiler's C++ layer writes to stderr, which a notebook would show: as it starts and stops, for
# a free it cannot match, from a CUDA build on a machine without a GPU, and torch 2.3's "Warm Up" stage.
_PROFILER_NOISE = ("profiler_start", "profiler_stop", "Memory block of unknown size",
                   "gpuGetDeviceCount failed", "ActivityProfilerController.cpp")


@contextlib.contextmanager
def _filtered_stderr():
    """Capture file descriptor 2, then pass on every line but the profiler's own."""
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
            lines = capture.read().decode(errors="replace").splitlines(keepends=True)
            sys.stderr.write("".join(line for line in lines if not any(n in line for n in _PROFILER_NOISE)))


# The open measure() blocks, outermost first. One profiler runs at a time: an inner CPU block pauses the outer
# one's, then hands it its events and restarts it. On CUDA an inner block first saves the peak for the outer.
_open: list[measure] = []


class measure:
    """Count the bytes allocated, freed and at peak in a ``with`` block, as a :class:`MemoryReport`.

    ``device="cpu"``: the profiler's every allocation and free, exact to the byte each op requests (the allocator's
    alignment and tensor objects come on top); frees of memory allocated before the block are ignored. ``"cuda"``:
    the caching allocator's blocks; by default (``PYTORCH_CUDA_ALLOC_CONF``) a request is rounded up to a multiple
    of 512 bytes, one over 1 MiB may get a cached block up to about 1 MiB larger; it resets the process's CUDA peak
    statistics (``torch.cuda.reset_peak_memory_stats``). Blocks nest; the report fills at exit.

    >>> x = torch.ones(256)
    >>> with measure() as m:
    ...     y = x * 2      # 1024 B for y, plus 8 + 4 B while the scalar 2 becomes a tensor
    ...     del y
    >>> m.allocated, m.freed, m.net, m.peak
    (1036, 1036, 0, 1036)
    """

    def __init__(self, device: Any = "cpu"):
        self.device = torch.device(device)
        if self.device.type not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("device='cuda' needs a CUDA GPU, and torch.cuda.is_available() is False here")
        if self.device.type == "cuda" and self.device.index is None:  # "cuda": the current GPU
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.device = torch.device("cpu") if self.device.type == "cpu" else self.device   # "cpu:0" too

    def __enter__(self) -> MemoryReport:   # each block fills a report of its own, so a measure can be reused
        self.report = MemoryReport(device=str(self.device))
        self._events: list[tuple[str, str | None, int, int]] = []  # CPU: unmatched frees included
        self._peak_seen = 0  # CUDA: the peak statistic before an inner block reset it
        if self.device.type == "cpu":
            self._stderr = _filtered_stderr()
            self._stderr.__enter__()  # until __exit__: the block's frees can log lines too
            self._around = next((block for block in reversed(_open) if block.device == self.device), None)
            if self._around is not None:
                self._around._pause()
            _open.append(self)
            self._resume()
        else:
            torch.cuda.synchronize(self.device)
            for block in _open:
                if block.device == self.device:
                    block._peak_seen = max(block._peak_seen, torch.cuda.max_memory_allocated(self.device))
            _open.append(self)
            torch.cuda.reset_peak_memory_stats(self.device)
            self._start = torch.cuda.memory_stats(self.device)
        return self.report

    def _resume(self) -> None:
        # the profiler that torch.profiler.profile wraps: the wrapper's first start imports torch._inductor (slow)
        self._profiler = torch.autograd.profiler.profile(use_cpu=True, profile_memory=True, use_kineto=True)
        self._profiler.__enter__()

    def _pause(self) -> None:
        """Stop this block's profiler; keep its CPU allocation events as (op, root op, address, signed bytes)."""
        self._profiler.__exit__(None, None, None)
        found = []

        def walk(nodes, op, root):
            for node in nodes:
                if node.tag != _EventType.Allocation:
                    walk(node.children, node.name, root or node.name)
                elif node.extra_fields.device.type == "cpu":
                    found.append((node.start_time_ns, op, root, node.extra_fields.ptr, node.extra_fields.alloc_size))

        walk(self._profiler.kineto_results.experimental_event_tree(), "(python)", None)
        self._events += [event[1:] for event in sorted(found, key=lambda e: e[0])]

    def __exit__(self, *exc) -> None:
        r = self.report
        _open.remove(self)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            end, start = torch.cuda.memory_stats(self.device), self._start
            r.allocated = end["allocated_bytes.all.allocated"] - start["allocated_bytes.all.allocated"]
            r.freed = end["allocated_bytes.all.freed"] - start["allocated_bytes.all.freed"]
            r.requested = end["requested_bytes.all.allocated"] - start["requested_bytes.all.allocated"]
            r.peak = max(end["allocated_bytes.all.peak"], self._peak_seen) - start["allocated_bytes.all.current"]
            return
        try:
            self._pause()
            if self._around is not None:
                self._around._events += self._events
                self._around._resume()
        finally:
            self._stderr.__exit__(None, None, None)
        live: dict[int, int] = {}  # address -> bytes, for what was allocated inside the block
        current = 0
        for op, root, address, nbytes in self._events:
            if nbytes > 0:
                live[address] = nbytes
            elif address in live:  # a free we can match to an allocation we saw
                nbytes = -live.pop(address)
            else:
                continue
            r.trace.append((op, root, address, nbytes))
            current += nbytes
            r.allocated += max(nbytes, 0)
            r.freed += max(-nbytes, 0)
            if current > r.peak:
                r.peak, r.peak_at = current, len(r.trace) - 1


class SavedReport(Table):
    """The tensors autograd saved, a row each (``tensors``: as dicts), ``nbytes`` of distinct storages, ``result``."""

    def __init__(self, result: Any, rows: list[list[Any]], nbytes: int):
        super().__init__(["shape", "dtype", "tensor_bytes", "storage_bytes", "storage"], rows,
                         title=f"{len(rows)} saved tensors, {nbytes:,} bytes in distinct storages")
        self.result, self.nbytes, self.tensors = result, nbytes, self.records()


def saved_for_backward(fn: Callable[..., Any], *args, **kwargs) -> SavedReport:
    """Run ``fn(*args, **kwargs)`` and count, with a pack hook, what autograd saves for backward (notebook 07).

    ``nbytes`` counts each distinct storage once, whole, not the numbers an op wraps as 0-d tensors. The hook keeps a
    detached tensor on the same memory (the saved tensor itself would tie a saved output to its own node in a cycle
    that only backward breaks). Autograd skips its in-place check for hooked tensors: count with this, do not test
    in-place safety with it.

    >>> x = torch.randn(100, requires_grad=True)
    >>> saved_for_backward(torch.sigmoid, x).nbytes   # sigmoid keeps its output
    400
    >>> saved_for_backward(lambda t: t + 1, x).nbytes  # add keeps nothing
    0
    """
    rows, keys = [], {}

    def pack(t):
        rows.append([tuple(t.shape), dtype_name(t.dtype), t.numel() * t.element_size(),
                     t.untyped_storage().nbytes(), keys.setdefault(storage_key(t), f"s{len(keys)}")])
        return t.detach()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn(*args, **kwargs)
    return SavedReport(result, rows, sum({label: nbytes for *_, nbytes, label in rows}.values()))


def saved_by_node(output) -> Table:
    """A row per tensor that each node of the graph behind ``output`` saved, with its own bytes (notebooks 05, 07).

    From ``_saved_*``, ``(nothing)`` if none (a custom autograd.Function hides its own); an unreadable one says why.

    >>> w = torch.ones(3, requires_grad=True)
    >>> t = saved_by_node((w * 2).relu())
    >>> [(r["node"], r["saved"]) for r in t]
    [('ReluBackward0', 'result'), ('MulBackward0', 'other'), ('AccumulateGrad', '(nothing)')]
    """
    rows = []
    for node in backward_nodes(output):  # depth-first from the output, each node once
        name, saved = type(node).__name__, saved_tensors(node)
        rows += [[name, label, t, "-", "-"] if isinstance(t, str) else
                 [name, label, tuple(t.shape), dtype_name(t.dtype), t.numel() * t.element_size()]
                 for label, t in saved] or [[name, "(nothing)", "-", "-", 0]]
    return Table(["node", "saved", "shape", "dtype", "bytes"], rows)


def memory_timeline(report: Any, mark: str = "aten::clone") -> tuple[list[int], list[tuple[int, int]]]:
    """From a CPU ``measure()`` report: bytes live after each event, and the sorted lifetimes (first event, last
    event) of the allocations whose root op is ``mark`` (one ending at the last may be alive). Notebooks 07 and 09.

    >>> from clonelab import measure; x = torch.ones(100)
    >>> with measure() as m:
    ...     c = x.clone(); y = c + c; del c
    >>> memory_timeline(m)
    ([400, 800, 400], [(0, 1)])
    """
    last = len(report.trace) - 1
    spans = [(a.start, last if a.end is None else a.end - 1) for a in allocation_lifetimes(report) if a.root == mark]
    return list(itertools.accumulate(nbytes for *_, nbytes in report.trace)), sorted(spans)
