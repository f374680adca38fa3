"""What ``identity = x.clone()`` costs in a whole ResNet, compared with ``identity = x``.

:func:`model_clone_cost` runs two copies of one model, one with every block set to
``identity="alias"`` and one with ``identity="clone"``, on the same input, and
measures both with :func:`clonelab.measure`. Notebook 09 and
``benchmarks/clone_cost.py`` use it.

>>> import torch
>>> from clonelab.models import BasicBlock, resnet
>>> model = resnet(BasicBlock, [1, 1], in_channels=1, base_width=4, stem="small")
>>> cost = model_clone_cost(model, torch.randn(2, 1, 8, 8), repeat=0)
>>> cost["extra_allocated"] == cost["expected_extra"] == 2 * 4 * 8 * 8 * 4 + 2 * 4 * 8 * 8 * 4
True
"""

from __future__ import annotations

import copy
import statistics
import time
from typing import Any

import torch
from torch import Tensor, nn

from clonelab._checks import require_bool, require_int, require_tensor
from clonelab._util import intra_op_threads

__all__ = ["block_inputs", "model_clone_cost"]

# The CUDA caching allocator rounds every request up to a multiple of 512 bytes
# (kMinBlockSize in c10/cuda/CUDACachingAllocator.cpp). The block it hands out, which
# is what its statistics count, can be larger still for a request over 1 MiB: it
# splits a bigger free block only when more than 1 MiB (kSmallSize) would remain.
_CUDA_BLOCK = 512


def _blocks(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The residual blocks of ``model`` whose identity can be switched, with their names."""
    from clonelab.models import BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock

    found = []
    for name, module in model.named_modules():
        if isinstance(module, (PreActBlock, ReluFirstBlock)):
            # PreActBlock takes no identity in a downsampling block, and
            # ReluFirstBlock writes into x: neither costs "one x.nbytes per block".
            raise ValueError(
                f"model must be built from BasicBlock or Bottleneck blocks; {name!r} is a "
                f"{type(module).__name__}"
            )
        if isinstance(module, (BasicBlock, Bottleneck)):
            found.append((name, module))
    if not found:
        raise ValueError("model must contain BasicBlock or Bottleneck blocks (e.g. clonelab.resnet(...)), "
                         "found none")
    return found


def block_inputs(model: nn.Module, x: Tensor) -> dict[str, int]:
    """Bytes of each residual block's input (what its clone copies) when ``model`` runs on ``x``.

    Forward pre-hooks on the blocks see their inputs. On the ``meta`` device
    this costs no memory and no compute: shapes alone give the bytes.

    >>> import torch
    >>> from clonelab.models import BasicBlock, resnet
    >>> net = resnet(BasicBlock, [1, 1], in_channels=1, base_width=4, stem="small").to("meta")
    >>> block_inputs(net, torch.empty(2, 1, 8, 8, device="meta"))
    {'layer1.0': 2048, 'layer2.0': 2048}
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(x, Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    found: dict[str, int] = {}
    hooks = [block.register_forward_pre_hook(
                 lambda mod, args, name=name: found.__setitem__(name, found.get(name, 0) + args[0].nbytes))
             for name, block in _blocks(model)]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    return found


def _variant(model: nn.Module, mode: str, device: torch.device) -> nn.Module:
    # A deep copy, so the caller's model (its weights, BN statistics, .grad) is left alone.
    twin = copy.deepcopy(model).to(device)
    for _, block in _blocks(twin):
        block.identity = mode  # read by forward() on every call
    twin.zero_grad(set_to_none=True)
    return twin


def _run(model: nn.Module, x: Tensor, backward: bool) -> Tensor:
    out = model(x)
    if backward:
        out.sum().backward()
    return out


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _clones_live_at_peak(events: list[tuple[str, str, int, int]],
                         names: list[str]) -> tuple[list[str] | None, str | None]:
    """Which blocks' identity clones were alive at the peak, and whether it was in forward or backward.

    Reads the allocation events that :func:`clonelab.measure` collected:
    the identity clone of a block is an ``aten::clone`` called from Python,
    so it is the root op above its allocation, and the k-th such clone
    belongs to the k-th block call. Replays allocations and frees to find the peak.
    """
    live: dict[int, tuple[int, str | None]] = {}  # ptr -> (bytes, block name of an identity clone)
    clone_index, current, peak, peak_live, peak_root = 0, 0, 0, {}, None
    for _, root, ptr, nbytes in events:
        if nbytes > 0:
            block = None
            if root == "aten::clone":
                block = names[clone_index] if clone_index < len(names) else None
                clone_index += 1
            live[ptr] = (nbytes, block)
        elif ptr in live:
            nbytes = -live.pop(ptr)[0]
        else:
            continue  # freed here, allocated before the measurement
        current += nbytes
        if current > peak:
            peak, peak_live, peak_root = current, dict(live), root
    if clone_index != len(names):  # the clones could not be matched to the blocks
        return None, None
    alive = [block for _, block in peak_live.values() if block is not None]
    phase = "backward" if peak_root and peak_root.startswith("autograd::engine") else "forward"
    return sorted(alive, key=names.index), phase


def model_clone_cost(model: nn.Module, x: Tensor, *, backward: bool = False, device: Any = "cpu",
               repeat: int = 3, threads: int | None = None) -> dict[str, Any]:
    """Measure ``identity = x.clone()`` against ``identity = x`` in every block of ``model``.

    ``model`` must be built from :class:`~clonelab.models.BasicBlock` or
    :class:`~clonelab.models.Bottleneck` blocks (e.g. by :func:`clonelab.resnet`);
    it is deep-copied twice, and the copies run in the mode ``model`` is in
    (``train()`` or ``eval()``), with autograd recording. ``backward=True``
    adds ``out.sum().backward()``. Each copy runs once to warm up, once under
    :func:`clonelab.measure` (``device`` ``"cpu"`` or ``"cuda"``), then
    ``repeat`` more times, alternating, for the timings (``repeat=0``: no timing).
    ``threads`` sets torch's intra-op CPU threads for the whole call and
    restores them afterwards (``None``: torch's setting). One thread keeps
    the timings steady on a busy machine, where threads wait on each other.

    Returned keys (bytes, seconds):

    * ``blocks``: ``{block name: nbytes of its input}``, from forward pre-hooks;
      ``expected_extra``: their sum (on CUDA, each rounded up to a multiple of
      512 bytes, as the allocator rounds requests). On CPU ``extra_allocated``
      equals it. On CUDA it need not: for a clone of more than 1 MiB the
      allocator may hand out a block up to about 1 MiB larger than the rounded
      request (it splits a free block only when more than 1 MiB would remain),
      and its statistics count the whole block.
    * ``alias_allocated``, ``clone_allocated``, ``extra_allocated``: bytes
      allocated in total, and the difference.
    * ``alias_peak``, ``clone_peak``, ``extra_peak``: peak bytes above the start.
    * ``alias_net``, ``clone_net``, ``extra_net``: bytes still held at the end
      (the autograd graph after a forward; the ``.grad`` tensors after backward).
    * ``live_at_peak``: the blocks whose identity clone was alive at the clone
      copy's peak; ``peak_phase``: ``"forward"`` or ``"backward"`` (CPU only,
      else ``None``). The clone copy runs the same ops as the alias copy plus
      the clones, so ``extra_peak`` is at most the sum of those blocks' inputs,
      and equal to it when both copies peak at the same op (as they do for
      the ResNets of notebook 09, where the peak is in a convolution).
    * ``extra_requested`` (CUDA only, else ``None``): the difference in bytes
      requested, before the allocator's rounding.
    * ``alias_time_s``, ``clone_time_s``: median wall time of one run;
      ``time_ratio``: clone / alias (``None`` when ``repeat=0``).

    >>> import torch
    >>> from clonelab.models import BasicBlock, resnet
    >>> model = resnet(BasicBlock, [1, 1], in_channels=1, base_width=4, stem="small")
    >>> cost = model_clone_cost(model, torch.randn(2, 1, 8, 8), backward=True, repeat=1)
    >>> list(cost["blocks"]), cost["extra_allocated"] == cost["expected_extra"]
    (['layer1.0', 'layer2.0'], True)
    >>> cost["time_ratio"] > 0
    True
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    require_tensor(x, "x")
    if not x.is_floating_point():
        raise ValueError(f"x must be a floating-point tensor (an input batch), got {x.dtype}")
    require_bool(backward, "backward")
    require_int(repeat, "repeat", minimum=0)
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be None or an int >= 1, got {threads!r}")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}") from None
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' needs a CUDA GPU, and torch.cuda.is_available() is False here")
    _blocks(model)  # checks the blocks before any work
    with intra_op_threads(threads):
        return _model_clone_cost(model, x, backward, dev, repeat)


def _model_clone_cost(model: nn.Module, x: Tensor, backward: bool, dev: torch.device, repeat: int) -> dict[str, Any]:
    from clonelab.memory import measure

    xs = x.detach().to(dev)
    variants = {mode: _variant(model, mode, dev) for mode in ("alias", "clone")}

    # The input of every block call, in call order, from the clone copy's measured run.
    inputs: list[tuple[str, int]] = []
    names = {block: name for name, block in _blocks(variants["clone"])}
    hooks = [block.register_forward_pre_hook(lambda mod, args: inputs.append((names[mod], args[0].nbytes)))
             for block in names]

    meters, reports = {}, {}
    for mode, twin in variants.items():
        _run(twin, xs, backward)  # warm-up: first-call allocations (thread pools, caches) stay out
        twin.zero_grad(set_to_none=True)
        inputs.clear()
        meters[mode] = measure(dev)
        with meters[mode] as reports[mode]:
            out = _run(twin, xs, backward)
        del out
        twin.zero_grad(set_to_none=True)
    for h in hooks:
        h.remove()
    alias, clone = reports["alias"], reports["clone"]

    calls = [name for name, _ in inputs]
    blocks: dict[str, int] = {}
    for name, nbytes in inputs:  # a block called twice counts twice
        blocks[name] = blocks.get(name, 0) + nbytes
    if dev.type == "cuda":
        expected = sum(-(-n // _CUDA_BLOCK) * _CUDA_BLOCK for _, n in inputs)
    else:
        expected = sum(n for _, n in inputs)

    if dev.type == "cpu":
        # The report's trace has each event's root op, which says which allocation was which clone.
        live, phase = _clones_live_at_peak(meters["clone"].report.trace, calls)
        requested = None
    else:
        live, phase = None, None
        requested = clone.requested - alias.requested

    times: dict[str, list[float]] = {"alias": [], "clone": []}
    for _ in range(repeat):
        for mode, twin in variants.items():  # alternating, so a slow spell hits both
            twin.zero_grad(set_to_none=True)
            _sync(dev)
            start = time.perf_counter()
            out = _run(twin, xs, backward)
            _sync(dev)
            times[mode].append(time.perf_counter() - start)
            del out
    alias_t = statistics.median(times["alias"]) if repeat else None
    clone_t = statistics.median(times["clone"]) if repeat else None

    return {
        "device": str(dev),
        "backward": backward,
        "input_shape": tuple(x.shape),
        "blocks": blocks,
        "expected_extra": expected,
        "alias_allocated": alias.allocated,
        "clone_allocated": clone.allocated,
        "extra_allocated": clone.allocated - alias.allocated,
        "extra_requested": requested,
        "alias_peak": alias.peak,
        "clone_peak": clone.peak,
        "extra_peak": clone.peak - alias.peak,
        "alias_net": alias.net,
        "clone_net": clone.net,
        "extra_net": clone.net - alias.net,
        "live_at_peak": live,
        "peak_phase": phase,
        "alias_time_s": alias_t,
        "clone_time_s": clone_t,
        "time_ratio": clone_t / alias_t if repeat else None,
    }
