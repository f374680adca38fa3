"""The series' charts: training curves, exact bytes against RSS, the "do I need a clone?" chart, memory over a
measured block, version counters over writes. Each is a closed matplotlib Figure (it shows once, as a cell's value)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any

from clonelab._checks import require_named
from clonelab._figure import _PALETTE, _canvas, _closed, _floats, _text
from clonelab._util import format_bytes
from clonelab.inspection import VersionSnapshot
from clonelab.memory import memory_timeline

if TYPE_CHECKING:  # only for type hints: matplotlib is imported when a figure is drawn
    from matplotlib.figure import Figure

def plot_history(histories: Mapping[str, Any], *, title: str | None = None) -> Figure:
    """Loss per step (log scale) and test accuracy per epoch, a curve per ``History`` (later ones dashed,
    on top); ``time_s`` and ``peak_bytes``, when finite, go into the legend. Notebook 10.

    >>> from types import SimpleNamespace as H
    >>> [ax.get_ylabel() for ax in plot_history({"alias": H(step_loss=[2.3, 1.1], test_acc=[0.9])}).axes]
    ['training loss (log scale)', 'test accuracy (%)']
    """
    require_named(histories, "histories", "History")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, PercentFormatter
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(9.6, 4.4))
    for k, (name, h) in enumerate(histories.items()):
        loss = _floats(getattr(h, "step_loss", None), f"histories[{name!r}].step_loss")
        acc = _floats(getattr(h, "test_acc", None), f"histories[{name!r}].test_acc", low=0)
        label = f"{name}: {100 * acc[-1]:.1f}% test"
        for attr, fmt in (("time_s", "{:.1f} s".format), ("peak_bytes", lambda v: f"peak {format_bytes(v)}")):
            v = getattr(h, attr, None)
            label += f", {fmt(v)}" if isinstance(v, Real) and math.isfinite(v) else ""
        style = dict(color=_PALETTE[k % len(_PALETTE)], ls=["-", "--", ":", "-."][k % 4], lw=max(2.4 - 0.6 * k, 1.0),
                     zorder=2 + k)  # later curves thinner and dashed, on top, so equal curves both show
        ax_loss.plot(range(1, len(loss) + 1), loss, **style, alpha=0.9)
        ax_acc.plot(range(1, len(acc) + 1), [100 * a for a in acc], marker="o", ms=6 - k, **style, label=label)
    ax_loss.set(yscale="log", xlabel="training step", ylabel="training loss (log scale)",
                title="training loss per step")
    ax_acc.set(xlabel="epoch", ylabel="test accuracy (%)", title="test accuracy per epoch")
    ax_acc.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_acc.yaxis.set_major_formatter(PercentFormatter(decimals=0))
    for ax in (ax_loss, ax_acc):
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle("Training history" if title is None else title, fontsize=13)
    fig.legend(loc="lower center", ncol=min(len(histories), 2), fontsize=9, frameon=False, handlelength=4)
    return _closed(fig, rect=(0, 0.06 + 0.05 * ((len(histories) - 1) // 2), 1, 1))


def _byte_ticks(lo: float, hi: float, step: int) -> list[float]:
    """The powers of ``step`` (1, step, step**2, ...) from ``lo`` to ``hi``."""
    ticks, t = [], 1.0
    while t <= hi * 1.0001:
        ticks += [t] if t >= lo * 0.9999 else []
        t *= step
    return ticks


def plot_memory_comparison(sizes_bytes: Sequence[float], exact_bytes: Sequence[float], rss_bytes: Sequence[float],
                           *, title: str | None = None) -> Figure:
    """Per tensor size (``x.nbytes``, >= 1): the bytes allocated for its clone (>= 0) and the RSS delta seen, all finite
    (a symmetric-log y axis shows 0 and negative deltas); dotted: y = x. Notebook 07 (a Deeper cell).

    >>> plot_memory_comparison([4, 4096], [4, 4096], [0, -4096]).axes[0].get_yscale()
    'symlog'
    """
    sizes, exact = _floats(sizes_bytes, "sizes_bytes", low=1), _floats(exact_bytes, "exact_bytes", low=0)
    rss = _floats(rss_bytes, "rss_bytes", low=-math.inf)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter
    fig, ax = plt.subplots(figsize=(9, 6))
    lo, hi = min(sizes), max(sizes)
    ax.plot([lo / 2, hi * 2], [lo / 2, hi * 2], ls=":", color="#888888", lw=1.2, label="y = x (what a clone costs)",
            zorder=1)
    ax.plot(sizes, exact, "-o", color=_PALETTE[0], lw=2, ms=5, label="exact count: bytes allocated", zorder=3)
    for keep, label, style in (
            (lambda r: r > 0, "memory_profiler: RSS delta", dict(marker="s", color=_PALETTE[1], ms=7, alpha=0.85)),
            (lambda r: r == 0, "RSS delta = 0 (nothing seen)", dict(marker="o", mfc="white", mec=_PALETTE[1],
                                                                     mew=1.6, ms=8)),
            (lambda r: r < 0, "RSS delta < 0 (it shrank)", dict(marker="v", color=_PALETTE[4], ms=8))):
        points = [(s, r) for s, r in zip(sizes, rss) if keep(r)]
        if points:
            ax.plot(*zip(*points), ls="none", **style, label=label, zorder=4)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1.0, linscale=0.6)  # log above 1 byte, linear through 0, mirrored below
    ax.set_xlim(lo / 2, hi * 2)
    ymax, ymin = max(max(exact), max(rss), hi) * 4, min(rss + [0.0])
    ax.set_ylim(ymin * 4 if ymin < 0 else -0.8, ymax)

    def signed(lo_tick, step):  # powers of step up to ymax, and below 0 down to ymin * 4
        return [-t for t in _byte_ticks(lo_tick, -ymin * 4, step)] * (ymin < 0) + _byte_ticks(lo_tick, ymax, step)

    for axis, major, minor in ((ax.xaxis, _byte_ticks(lo / 2, hi * 2, 32), _byte_ticks(lo / 2, hi * 2, 2)),
                               (ax.yaxis, signed(1024, 1024) + [0.0], signed(1, 32))):  # not 1 B: it crowds 0
        axis.set_major_locator(FixedLocator(sorted(major)))
        axis.set_minor_locator(FixedLocator(minor))
        axis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v) if v else "0"))
        axis.set_minor_formatter(NullFormatter())
    ax.axhline(0, color="#444444", lw=0.8, zorder=2)
    ax.set(xlabel="tensor size (bytes, log scale)", ylabel="memory increase reported (bytes, symlog scale)",
           title="What does a clone cost? Exact count vs RSS delta" if title is None else title)
    ax.grid(True, which="major", alpha=0.3)
    # below the axes: inside, it would hide points wherever it went
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=9, frameon=False)
    return _closed(fig)


_CHART_COLOURS = {"question": "#e8eef7", "right": "#dff0d8", "silent": "#fcf0d0", "error": "#f6d6d6"}

# (name, kind, text): the questions run down the left column, each with its outcome to the right.
DECISION_CHART = (
    ("write", "question", "identity = x; then the branch runs.\nDoes anything write into x's memory (x, its\n"
                          "views or its base) in place before the addition?\n"
                          "x += ...   x.relu_()   nn.ReLU(inplace=True)\nx[...] = ...   x.copy_(...)   f(..., out=x)"),
    ("alias ok", "right", "identity = x is right, and free:\nnothing to fix, no clone needed\n"
                          "(the post's model, torchvision's blocks)."),
    ("recording", "question", "Does autograd record the write? (x or the\nvalue written requires grad, with grad mode\n"
                              "on: not under torch.no_grad() or\ntorch.inference_mode())"),
    ("unchecked", "silent", "Autograd does not refuse it. Backward raises\nonly if a node saved x earlier, with grad\n"
                            "mode on (x * w with w requiring grad; or\nx = sigmoid(z) made with grad on, then\nwritten under no_grad).\n"
                            "Else identity silently sees the write.\nFix: make the write out of place (if\n"
                            "nothing raises, a clone works too)."),
    ("leaf", "question", "Is it an out= call (most ops refuse them), or a\nwrite into a leaf that requires grad, a view\n"
                         "of one, an output of chunk, split or unbind,\nor another refused view (notebook 05)?"),
    ("leaf error", "error", "RuntimeError at the write,\nclone or not.\nFix: make the write out of place."),
    ("saved", "question", "Before the write, did a node that backward\nruns save x? (relu, sigmoid, exp keep their\n"
                          "output x; conv(x) keeps x; x * w keeps x if\nw needs a gradient; a view or the base of x\n"
                          "counts: they share one version counter)"),
    ("saved error", "error", "RuntimeError at backward\n(\"modified by an inplace operation\"),\n"
                             "clone or not.\nFix: make the write out of place."),
    ("silent", "silent", "Nothing saved x (it came from add, conv,\nbatch norm ..., none of which keeps its\n"
                         "output x): no error, but identity sees\nthe write: a silently different model.\n"
                         "Fix: make the write out of place, or\nidentity = x.clone() (costs x.nbytes;\n"
                         "x itself is overwritten)."),
)
# name -> (centre x, centre y, height) of its box; the arrows as (from, to, label)
_CHART_AT = {"write": (2.3, 11.2, 1.6), "alias ok": (7.6, 11.2, 1.2), "recording": (2.3, 8.5, 1.15),
             "unchecked": (7.6, 8.5, 2.4), "leaf": (2.3, 6.6, 1.2), "leaf error": (7.6, 6.6, 1.0),
             "saved": (2.3, 4.75, 1.75), "saved error": (7.6, 4.75, 1.2), "silent": (2.3, 1.8, 1.95)}
_CHART_ARROWS = (("write", "alias ok", "no"), ("write", "recording", "yes"), ("recording", "unchecked", "no"),
                 ("recording", "leaf", "yes"), ("leaf", "leaf error", "yes"), ("leaf", "saved", "no"),
                 ("saved", "saved error", "yes"), ("saved", "silent", "no"))


def decision_chart() -> Figure:
    """The decision chart "do I need ``identity = x.clone()``?" of notebook 11, a closed Figure 950 px wide.

    >>> sorted(t.get_text() for t in decision_chart().axes[0].texts if t.get_text() in ("yes", "no"))
    ['no', 'no', 'no', 'no', 'yes', 'yes', 'yes', 'yes']
    """
    from matplotlib.patches import FancyBboxPatch
    fig, ax = _canvas((9.5, 8.2), (0, 10), (0.75, 12.35), left=0.01, right=0.99, bottom=0.01, top=0.955)
    width = 4.35
    for name, kind, body in DECISION_CHART:
        x, y, height = _CHART_AT[name]
        ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.06",
                                    fc=_CHART_COLOURS[kind], ec="#555555", lw=1.1))
        _text(ax, x, y, body, 9.5, linespacing=1.3)
    for a, b, label in _CHART_ARROWS:
        (xa, ya, ha), (xb, yb, hb) = _CHART_AT[a], _CHART_AT[b]
        if ya == yb:  # across, label above the arrow
            start, end = (xa + width / 2 + 0.06, ya), (xb - width / 2 - 0.06, yb)
            spot = dict(xy=((start[0] + end[0]) / 2, ya + 0.08), ha="center", va="bottom")
        else:  # down, label beside it
            start, end = (xa, ya - ha / 2 - 0.06), (xb, yb + hb / 2 + 0.06)
            spot = dict(xy=(xa + 0.12, (start[1] + end[1]) / 2), ha="left", va="center")
        ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle="-|>", lw=1.3, color="#333333", shrinkA=0,
                                                              shrinkB=0))
        ax.annotate(label, fontsize=10, fontweight="bold", **spot)
    ax.set_title("Do I need identity = x.clone()?", fontsize=13, fontweight="bold")
    return _closed(fig, tight=False)


def plot_memory_timeline(reports: Mapping[str, Any], *, mark: str = "aten::clone", title: str | None = None) -> Figure:
    """Bytes live over each measured block, a line per report (dotted: backward starts), and below, a bar per allocation
    whose root op is ``mark``, from allocation to free. ``reports``: name -> ``measure()`` report. Notebooks 07 and 09.

    >>> import torch; from clonelab import measure
    >>> with measure() as m:
    ...     y = torch.ones(100).clone() * 2
    >>> [ax.get_ylabel() for ax in plot_memory_timeline({"clone": m}).axes]
    ['bytes live (MiB)', 'clones']
    """
    require_named(reports, "reports", "report from `with measure() as report`")
    import matplotlib.pyplot as plt
    timelines = {name: memory_timeline(r, mark) for name, r in reports.items()}
    rows = sum(1 for _, spans in timelines.values() if spans) or 1
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9.5, 5.6), sharex=True,
                                      gridspec_kw={"height_ratios": [3, max(1, 0.35 * rows + 0.6)]})
    for k, (name, (live, spans)) in enumerate(timelines.items()):
        colour = _PALETTE[k % len(_PALETTE)]
        top.step(range(len(live)), [b / 2**20 for b in live], where="post", color=colour, lw=1.4,
                 label=f"{name}: peak {format_bytes(max(live, default=0))}")
        backward = reports[name].backward_start
        if backward is not None:
            top.axvline(backward, color=colour, ls=":", lw=1)
            if k == 0:
                top.annotate("backward starts", (backward, 0), xytext=(3, 3), textcoords="offset points", fontsize=8)
        for j, (start, end) in enumerate(spans):  # one thin bar per allocation, stacked in its row
            y = k - 0.35 + 0.7 * (j + 0.5) / len(spans)
            bottom.plot([start, end + 1], [y, y], color=colour, lw=max(1.0, 6 / len(spans) ** 0.5),
                        solid_capstyle="butt")
    top.set_ylabel("bytes live (MiB)")
    top.legend(loc="upper left", fontsize=9)
    top.set_ylim(bottom=0)          # from zero: the first step up is the first allocation
    top.grid(alpha=0.3)
    bottom.set_ylabel("clones" if mark == "aten::clone" else mark)
    bottom.set_yticks(range(len(timelines)), list(timelines))
    bottom.set(ylim=(-0.7, len(timelines) - 0.3), xlabel="allocation and free events, in order")
    bottom.grid(alpha=0.3, axis="x")
    fig.suptitle(title or "Bytes live during the block; bars: how long each clone lives", fontsize=11)
    return _closed(fig)


def plot_versions(snapshots: Sequence[VersionSnapshot], *, title: str | None = None) -> Figure:
    """A grid of ``_version`` and values, a row per tensor and a column per snapshot; orange: the version
    went up in that step; the snapshots are :func:`version_snapshot` results of the same tensors. Notebook 04.

    >>> import torch; from clonelab import version_snapshot
    >>> x = torch.zeros(2); c = x.clone()
    >>> shots = [version_snapshot({"x": x, "c": c}, "start")]
    >>> x += 1
    >>> shots.append(version_snapshot({"x": x, "c": c}, "x += 1"))
    >>> len(plot_versions(shots).axes[0].patches)
    4
    """
    names = [name for name, _, _ in snapshots[0].rows]
    from matplotlib.patches import Rectangle
    cols, rows = len(snapshots), len(names)
    fig, ax = _canvas((min(9.5, 1.9 + 1.6 * cols), 0.75 + 0.62 * rows), (-1.9 / 1.6, cols), (rows, -0.6))
    for c, shot in enumerate(snapshots):
        _text(ax, c + 0.5, -0.3, shot.label, 9, family="monospace", fontweight="bold")
        for r, (name, version, values) in enumerate(shot.rows):
            moved = c > 0 and version > snapshots[c - 1].rows[r][1]  # a write, seen through this name
            ax.add_patch(Rectangle((c + 0.04, r + 0.06), 0.92, 0.88, fc="#fcd9a8" if moved else "#f2f2f2",
                                   ec="#999999", lw=0.8))
            _text(ax, c + 0.5, r + 0.5, f"v{version}\n" + " ".join(f"{v:g}" for v in values), 8.5,
                  family="monospace", linespacing=1.3)
    for r, name in enumerate(names):
        _text(ax, -0.08, r + 0.5, name, 9, ha="right", family="monospace")
    ax.set_title(title or "x._version and values after each step (orange: the version moved)", fontsize=10)
    return _closed(fig)
