#!/usr/bin/env python3
"""What does ``identity = x.clone()`` cost in a whole ResNet, next to ``identity = x``?

For ResNet-18 and ResNet-50 shapes (torchvision's layouts, 1000 classes), a
forward pass and a forward+backward pass, on the CPU and on CUDA when there is
a GPU, and for two orderings of the shortcut line, it prints:

* total bytes allocated with alias and with clone, the difference, and the
  expected difference (the sum of every block input's ``nbytes``);
* peak bytes with alias and with clone, the difference, and the blocks whose
  clone is alive at the clone run's peak (CPU only);
* the median time of each variant over repeated runs, and their ratio.

The post compares two codes. torchvision's blocks write ``identity = x`` and
``identity = self.downsample(x)``; the post's second code (JayPatwardhan/ResNet-PyTorch,
``ResNet/ResNet.py``) writes ``identity = x.clone()`` and ``identity = self.downsample(identity)``,
so a downsampling block's shortcut convolution saves the clone until backward
(``clonelab.SecondCodeBlock``, ``SecondCodeBottleneck``). ``--order second`` (the default) measures
the second code against its alias twin, which computes torchvision's block. ``--order torchvision``
measures torchvision's block with a clone (``downsample(x)``: the clone is freed inside its block).

Bytes come from ``clonelab.measure()`` (the profiler's allocator events on the
CPU, the caching allocator's statistics on CUDA), through ``clonelab.model_clone_cost``.

Run: ``python benchmarks/clone_cost.py`` (about two minutes on an idle 2-core machine);
``--batch``, ``--size``, ``--repeat``, ``--threads``, ``--device`` and ``--order``
change the defaults. The byte counts are exact and repeatable; the timings move with
whatever else the machine is doing, which is why each is a median, the two
variants alternate, and the CPU runs use one thread unless told otherwise (on a
busy machine, several threads spend much of their time waiting on each other).
"""

from __future__ import annotations

import argparse
import platform
import time

import torch

from clonelab import BasicBlock, Bottleneck, SecondCodeBlock, SecondCodeBottleneck, model_clone_cost, resnet


def timing(c: dict) -> str:
    """The two median times and their ratio; dashes when the run was not timed (--repeat 0)."""
    if c["alias_time_s"] is None:
        return f"{'-':>10} {'-':>10} {'-':>5}"
    return f"{1e3 * c['alias_time_s']:>10.1f} {1e3 * c['clone_time_s']:>10.1f} {c['time_ratio']:>5.2f}"


MODELS = [("ResNet-18", [2, 2, 2, 2]), ("ResNet-50", [3, 4, 6, 3])]
# ordering -> the block class for each model
BLOCKS = {
    "second": {"ResNet-18": SecondCodeBlock, "ResNet-50": SecondCodeBottleneck},    # downsample(identity)
    "torchvision": {"ResNet-18": BasicBlock, "ResNet-50": Bottleneck},              # downsample(x)
}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.2f}"


def short(names: list[str] | None) -> str:
    return "-" if names is None else (", ".join(names) or "none")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4, help="batch size (default 4)")
    parser.add_argument("--size", type=int, default=224, help="image height and width (default 224)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each variant (default 7; 0: bytes only)")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads for torch (default 1: steady timings on a busy machine; "
                             "0: torch's own choice, all cores)")
    parser.add_argument("--device", choices=["cpu", "cuda", "all"], default="all",
                        help="where to run (default: the CPU, and CUDA when available)")
    parser.add_argument("--order", choices=["second", "torchvision", "both"], default="second",
                        help="the clone run's shortcut line: the post's second code, downsample(identity) "
                             "(default), torchvision's downsample(x), or both")
    args = parser.parse_args()
    if args.threads < 0:
        parser.error("--threads must be 0 (torch's choice) or more")
    threads = args.threads or torch.get_num_threads()

    devices = ["cpu", "cuda"] if args.device == "all" else [args.device]
    if not torch.cuda.is_available():
        if args.device == "cuda":
            parser.error("--device cuda needs a CUDA GPU, and torch.cuda.is_available() is False")
        devices = [d for d in devices if d != "cuda"]

    print(f"machine: {cpu_model()}, {platform.system()} {platform.machine()}")
    print(f"torch {torch.__version__}, {threads} CPU thread{'s' if threads > 1 else ''}"
          + (f", GPU: {torch.cuda.get_device_name(0)}" if "cuda" in devices else ", no CUDA GPU used"))
    print(f"input: batch {args.batch}, 3 x {args.size} x {args.size} images; 1000 classes; train mode; "
          f"timings: median of {args.repeat} runs")
    print("alloc and peak in MiB (2**20 bytes), differences in bytes; 'expected B' = the sum of the "
          "block inputs' nbytes (on CUDA, each rounded up to a 512-byte block); 'held B' = the extra bytes "
          "still held at the end (after a forward pass: what the graph keeps for backward)")
    print("order: 'second' = the post's second code, identity = self.downsample(identity); 'torchvision' = "
          "identity = self.downsample(x); the alias run computes torchvision's block in both\n")
    orders = ["second", "torchvision"] if args.order == "both" else [args.order]

    head = (f"{'model':9} {'pass':7} {'order':11} {'device':6} | {'alloc alias':>11} {'alloc clone':>11} "
            f"{'diff B':>11} {'expected B':>11} | {'peak alias':>10} {'peak clone':>10} {'diff B':>10} "
            f"{'held B':>10} | {'t alias ms':>10} {'t clone ms':>10} {'ratio':>5}")
    print(head)
    print("-" * len(head))
    lives = []
    start = time.perf_counter()
    for device in devices:
        for name, layers in MODELS:
            for order in orders:
                torch.manual_seed(0)  # the same weights in both orderings
                model = resnet(BLOCKS[order][name], layers, num_classes=1000)
                x = torch.randn(args.batch, 3, args.size, args.size)
                for backward in (False, True):
                    c = model_clone_cost(model, x, backward=backward, device=device, repeat=args.repeat,
                                   threads=threads)
                    ok = "" if c["extra_allocated"] == c["expected_extra"] else " (!)"
                    kind = "fwd+bwd" if backward else "fwd"
                    print(f"{name:9} {kind:7} {order:11} {device:6} | "
                          f"{mib(c['alias_allocated']):>11} {mib(c['clone_allocated']):>11} "
                          f"{c['extra_allocated']:>11,} {c['expected_extra']:>11,}{ok} | "
                          f"{mib(c['alias_peak']):>10} {mib(c['clone_peak']):>10} {c['extra_peak']:>10,} "
                          f"{c['extra_net']:>10,} | "
                          f"{timing(c)}", flush=True)
                    lives.append((name, kind, order, device, c))
    print("\nclones alive at the clone run's peak (the peak difference is at most their sum; equal when both "
          "runs peak at the same op):")
    for name, kind, order, device, c in lives:
        if c["live_at_peak"] is not None:
            held = sum(c["blocks"][b] for b in c["live_at_peak"])
            print(f"  {name} {kind} {order} {device}: peak in {c['peak_phase']}; {short(c['live_at_peak'])} "
                  f"= {held:,} B (peak diff {c['extra_peak']:,} B)")
    print(f"\nrun time: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
