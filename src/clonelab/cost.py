"""What ``identity = x.clone()`` costs in a ResNet, next to ``identity = x`` (notebook 09, benchmarks/clone_cost.py)."""

from __future__ import annotations

import contextlib
import copy
import statistics
import time
from typing import Any, Iterator

import torch
from torch import Tensor, nn

from clonelab._checks import require_bool, require_int
from clonelab._util import intra_op_threads
from clonelab.memory import MemoryReport, allocation_lifetimes, measure
from clonelab.models import BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock


def _blocks(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The residual blocks of ``model`` whose identity can be switched, with their names."""
    found = []
    for name, module in model.named_modules():
        if isinstance(module, (PreActBlock, ReluFirstBlock)):
            # not "x.nbytes a block": PreActBlock has no identity where it downsamples, ReluFirstBlock writes into x
            raise ValueError(f"model must be built from BasicBlock or Bottleneck blocks; {name!r} is a "
                             f"{type(module).__name__}")
        if isinstance(module, (BasicBlock, Bottleneck)):
            found.append((name, module))
    if not found:
        raise ValueError("model must contain BasicBlock or Bottleneck blocks (e.g. clonelab.resnet(...)), found none")
    return found


@contextlib.contextmanager
def _block_calls(model: nn.Module) -> Iterator[list[tuple[str, int]]]:
    """While open: ``(block name, nbytes of its input)`` for every block call, in order, from forward pre-hooks."""
    calls: list[tuple[str, int]] = []
    hooks = [block.register_forward_pre_hook(lambda mod, args, name=name: calls.append((name, args[0].nbytes)))
             for name, block in _blocks(model)]
    try:
        yield calls
    finally:
        for h in hooks:
            h.remove()


def _per_block(calls: list[tuple[str, int]]) -> dict[str, int]:
    return {name: sum(n for k, n in calls if k == name) for name, _ in calls}  # a block called twice counts twice


def block_inputs(model: nn.Module, x: Tensor) -> dict[str, int]:
    """Bytes of each residual block's input (what its clone copies) when ``model`` runs on ``x``; free on ``meta``.

    >>> from clonelab.models import resnet
    >>> net = resnet(BasicBlock, [1, 1], in_channels=1, base_width=4, stem="small").to("meta")
    >>> block_inputs(net, torch.empty(2, 1, 8, 8, device="meta"))
    {'layer1.0': 2048, 'layer2.0': 2048}
    """
    with _block_calls(model) as calls, torch.no_grad():
        model(x)
    return _per_block(calls)


def _variant(model: nn.Module, identity_mode: str, device: torch.device) -> nn.Module:
    twin = copy.deepcopy(model).to(device)  # a copy: the caller's weights, BN statistics and .grad stay as they are
    for _, block in _blocks(twin):
        block.identity_mode = identity_mode  # read by forward() on every call
    twin.zero_grad(set_to_none=True)
    return twin


def _forward_backward(model: nn.Module, x: Tensor, backward: bool) -> Tensor:
    out = model(x)
    if backward:
        out.sum().backward()
    if x.device.type == "cuda":
        torch.cuda.synchronize(x.device)
    return out


def _live_at_peak(report: MemoryReport, calls: list[tuple[str, int]]) -> tuple[list[str] | None, str | None]:
    """The blocks whose identity clone is alive at the report's peak, and whether the peak is in forward or
    backward: the k-th allocation with root op ``aten::clone`` belongs to the k-th block call."""
    clones = [a for a in allocation_lifetimes(report) if a.root == "aten::clone"]
    at = report.peak_at
    if at is None or len(clones) != len(calls):  # the clones could not be matched to the blocks
        return None, None
    alive = [name for (name, _), a in zip(calls, clones) if a.start <= at and (a.end is None or a.end > at)]
    start = report.backward_start
    return alive, "backward" if start is not None and at >= start else "forward"


def model_clone_cost(model: nn.Module, x: Tensor, *, backward: bool = False, device: Any = "cpu",
                     repeat: int = 3, threads: int | None = None) -> dict[str, Any]:
    """Measure ``identity = x.clone()`` against ``identity = x`` in every block of ``model``, on input ``x``.

    Two deep copies of ``model`` (BasicBlock or Bottleneck blocks only), one per ``identity_mode``, run forward (and
    ``out.sum().backward()`` if ``backward``) once to warm up, once under :func:`clonelab.measure` on ``device``,
    then ``repeat`` times each, alternating, for the timings; ``threads``: torch's intra-op threads (None: as is).
    Returns (bytes, seconds): ``blocks``, ``{block name: nbytes of its input}``, and their sum ``expected_extra``
    (CUDA: each rounded up to 512 bytes); ``alias_``/``clone_``/``extra_`` + ``allocated``, ``peak``, ``net`` (held
    at the end); ``live_at_peak``, the blocks whose clone is alive at the peak, and ``peak_phase`` (CPU only);
    ``extra_requested`` (CUDA only); ``alias_time_s``, ``clone_time_s`` (medians) and ``time_ratio``.

    >>> from clonelab.models import resnet
    >>> model = resnet(BasicBlock, [1, 1], in_channels=1, base_width=4, stem="small")
    >>> cost = model_clone_cost(model, torch.randn(2, 1, 8, 8), backward=True, repeat=1)
    >>> cost["blocks"], cost["extra_allocated"] == cost["expected_extra"], cost["time_ratio"] > 0
    ({'layer1.0': 2048, 'layer2.0': 2048}, True, True)
    """
    require_int(repeat, "repeat", minimum=0)
    require_bool(backward, "backward")
    dev = measure(device).device  # ValueError for a device other than the CPU or a CUDA GPU
    _blocks(model)  # checks the blocks before any work
    with intra_op_threads(threads):
        xs = x.detach().to(dev)
        variants = {identity_mode: _variant(model, identity_mode, dev) for identity_mode in ("alias", "clone")}
        reports: dict[str, MemoryReport] = {}
        for identity_mode, twin in variants.items():
            _forward_backward(twin, xs, backward)  # warm-up: first-call allocations (thread pools, caches) stay out
            twin.zero_grad(set_to_none=True)
            with _block_calls(twin) as calls, measure(dev) as reports[identity_mode]:
                out = _forward_backward(twin, xs, backward)  # kept to the end of the block: net counts what it holds
            del out
            twin.zero_grad(set_to_none=True)
        times: dict[str, list[float]] = {"alias": [], "clone": []}
        for _ in range(repeat):
            for identity_mode, twin in variants.items():  # alternating, so a slow spell hits both
                twin.zero_grad(set_to_none=True)
                start = time.perf_counter()
                _forward_backward(twin, xs, backward)
                times[identity_mode].append(time.perf_counter() - start)
    alias, clone = reports["alias"], reports["clone"]  # `calls` is the clone copy's, measured last
    cpu = dev.type == "cpu"
    live, phase = _live_at_peak(clone, calls) if cpu else (None, None)
    result = {"blocks": _per_block(calls), "live_at_peak": live, "peak_phase": phase,
              "expected_extra": sum(n if cpu else -(-n // 512) * 512 for _, n in calls),
              "extra_requested": None if cpu else clone.requested - alias.requested}
    for key in ("allocated", "peak", "net"):
        result[f"alias_{key}"], result[f"clone_{key}"] = getattr(alias, key), getattr(clone, key)
        result[f"extra_{key}"] = getattr(clone, key) - getattr(alias, key)
    median = {identity_mode: statistics.median(t) if t else None for identity_mode, t in times.items()}
    result.update(alias_time_s=median["alias"], clone_time_s=median["clone"],
                  time_ratio=median["clone"] / median["alias"] if repeat else None)
    return result
