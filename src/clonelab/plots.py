"""Pictures for the series: names -> tensors -> storage, training curves, bytes vs RSS, the clone chart,
memory over a measured block, and the version counter. The drawing functions return a closed matplotlib
Figure, so in Jupyter it shows once, as the cell's value; matplotlib is imported only when one is drawn."""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import TYPE_CHECKING, Any

import torch

from clonelab._checks import require_dense_tensor, require_named, require_optional_str, storage_key
from clonelab._util import dtype_name, format_bytes, version_of
from clonelab.inspection import storage_positions
from clonelab.memory import allocation_lifetimes

if TYPE_CHECKING:  # only for type hints: matplotlib is imported when a figure is drawn
    from matplotlib.figure import Figure

__all__ = ["VersionSnapshot", "decision_chart", "memory_timeline", "plot_history", "plot_memory_comparison",
           "plot_memory_timeline", "plot_storage", "plot_versions", "version_snapshot"]
MAX_CELLS = 24  # storages up to this many elements are drawn cell by cell
_MAX_EXACT = 4096  # tensors up to this many elements get their exact element set
_MAX_OBJECTS = 20  # more tensor objects than this do not fit a readable figure
_FIG_W = 9.6  # inches: 960 px at the 100 dpi of JupyterLab's inline figures, under a 1000 px column
_MONO_CHAR = 0.6 / 72  # inches per point of font size, DejaVu Sans Mono
_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22"]


def _light(colour: str, amount: float) -> tuple[float, ...]:
    from matplotlib.colors import to_rgb
    return tuple(c + (1 - c) * amount for c in to_rgb(colour))


def _floats(values: Any, argname: str, low: float | None = None) -> list[float]:
    """A list, array or tensor of numbers as floats; with ``low``, each must be finite and >= low."""
    values = values.tolist() if hasattr(values, "tolist") else values  # a tensor or a NumPy array
    if isinstance(values, str) or not isinstance(values, Sequence) or not all(isinstance(v, Real) for v in values):
        raise TypeError(f"{argname} must be a sequence of numbers; got {values!r:.60}")
    if not values:
        raise ValueError(f"{argname} must not be empty")
    if low is not None and not all(math.isfinite(v) and v >= low for v in values):
        raise ValueError(f"{argname} must all be finite" + ("" if low == -math.inf else f" and >= {low:g}"))
    return [float(v) for v in values]


def _canvas(size: tuple[float, float], xlim: tuple[float, float], ylim: tuple[float, float],
            **margins: float) -> tuple[Figure, Any]:
    """A figure of ``size`` inches with one frameless axes, placed by ``margins`` (left=, top=, ...)."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=size, gridspec_kw=margins, subplot_kw=dict(xlim=xlim, ylim=ylim))
    ax.axis("off")
    return fig, ax


def _closed(fig: Figure, tight: bool = True, **tight_args: Any) -> Figure:
    """Lay ``fig`` out (unless ``tight`` is False) and close it, so that it shows once, as the cell's value."""
    import matplotlib.pyplot as plt
    if tight:
        fig.tight_layout(**tight_args)
    plt.close(fig)
    return fig


# What plot_storage draws. An object: its tensor's layout; its elements' positions in cells (None when too many);
# the covered cells as [start, stop) runs (only the span when not exact). A storage: cells of its tensors' smallest
# dtype; values: their labels when few, real and not meta. A layout: name -> object index, objects, storages.
_Object = collections.namedtuple("_Object", "names shape stride storage_offset dtype storage elements "
                                            "cells_per_element ranges exact")
_Storage = collections.namedtuple("_Storage", "nbytes cell_dtype n_cells device objects values")
_Layout = collections.namedtuple("_Layout", "names objects storages")


def _label(v: Any) -> str:
    """A cell's value, short: T/F, a whole number as an int, else 3 significant digits."""
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e5 else f"{v:.3g}"
    return ("T" if v else "F") if isinstance(v, bool) else str(v)


def _storage_layout(tensors: Mapping[str, torch.Tensor]) -> _Layout:
    """Which names share a tensor object, which objects share a storage, and which cells each covers."""
    require_named(tensors, "tensors", "tensor", require_dense_tensor)
    by_storage: dict[int, dict[int, torch.Tensor]] = {}  # storage -> its objects, in order of appearance
    for t in tensors.values():
        by_storage.setdefault(storage_key(t), {})[id(t)] = t
    order = {oid: i for i, oid in enumerate(oid for ts in by_storage.values() for oid in ts)}
    if len(order) > _MAX_OBJECTS:
        raise ValueError(f"tensors holds {len(order)} distinct tensor objects; at most {_MAX_OBJECTS} "
                         "fit in a readable picture")
    objects, storages, item_bytes = [], [], lambda dt: torch.empty(0, dtype=dt).element_size()
    for s_index, ts in enumerate(by_storage.values()):
        first = next(iter(ts.values()))
        cell_dtype, storage = min((t.dtype for t in ts.values()), key=item_bytes), first.untyped_storage()
        n_cells, values = storage.nbytes() // item_bytes(cell_dtype), None
        if n_cells <= MAX_CELLS and first.device.type != "meta":
            flat = torch.empty(0, dtype=cell_dtype, device=first.device)
            with torch.no_grad():
                flat.set_(storage, 0, (n_cells,), (1,))
            values = None if flat.is_complex() else tuple(_label(v) for v in flat.cpu().tolist())
        storages.append(_Storage(storage.nbytes(), cell_dtype, n_cells, str(first.device),
                                 tuple(order[oid] for oid in ts), values))
        for t in ts.values():
            per, elements, exact = t.element_size() // item_bytes(cell_dtype), None, True  # cells per element
            if t.numel() <= _MAX_EXACT:
                elements = tuple(p * per for p in storage_positions(t))
                cells = {e + k for e in elements for k in range(per)}  # as [start, stop) runs:
                ranges = tuple(zip(sorted(c for c in cells if c - 1 not in cells),
                                   sorted(c + 1 for c in cells if c + 1 not in cells)))
            else:  # only the span; exact when the layout is a permutation of a contiguous one
                last = t.storage_offset() + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
                ranges, expected = ((t.storage_offset() * per, (last + 1) * per),), 1
                for st, n in sorted((st, n) for n, st in zip(t.shape, t.stride()) if n != 1):
                    exact, expected = exact and st == expected, expected * n
            objects.append(_Object(tuple(name for name, u in tensors.items() if u is t), tuple(t.shape),
                                   tuple(t.stride()), t.storage_offset(), t.dtype, s_index, elements, per,
                                   ranges, exact))
    return _Layout({name: order[id(t)] for name, t in tensors.items()}, tuple(objects), tuple(storages))


def _text(ax: Any, x: float, y: float, s: str, size: float, colour: str | None = None, **kw: Any) -> None:
    """Text centred on (x, y) unless ``kw`` says otherwise (``ha``, ``va``)."""
    ax.text(x, y, s, fontsize=size, color=colour, **{"ha": "center", "va": "center", **kw})


def plot_storage(tensors: Mapping[str, torch.Tensor], *, title: str | None = None) -> Figure:
    """Draw names -> tensor objects -> storages; each object's marks are numbered in its own element order.
    TypeError or ValueError, naming ``tensors``, unless it is a dict of str -> 1 to 20 distinct dense tensors.
    Notebooks 01-03.

    >>> len(plot_storage({"a": torch.arange(6.0)}, title="one tensor").axes)
    1
    """
    require_optional_str(title, "title")
    layout = _storage_layout(tensors)
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

    def box(x, y, w, h, rounding, **kw):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0,rounding_size={rounding}", **kw))

    def arrow(start, end, colour, lw, shrink):
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color=colour, lw=lw,
                                     shrinkA=shrink[0], shrinkB=shrink[1]))

    # sizes in inches: the axes fills the figure and its data units are inches
    name_font, box_font, name_h, name_step, mark_h = 11.0, 9.0, 0.3, 0.4, 0.28
    name_w = max(max(len(n) for n in layout.names) * name_font * _MONO_CHAR + 0.3, 0.6)
    box_text = [f"shape   {o.shape}\nstride  {o.stride}\noffset  {o.storage_offset}\n"
                f"dtype   {dtype_name(o.dtype)}" for o in layout.objects]
    box_w = max(max(len(s) for b in box_text for s in b.split("\n")) * box_font * _MONO_CHAR + 0.3, 1.7)
    box_h = 0.26 + 4 * (1.35 * box_font / 72) + 0.12  # header band, four lines, padding
    name_col = max(name_w, 1.15)  # wide enough for its column header
    x_name, x_obj = 0.2 + (name_col - name_w) / 2, 0.2 + name_col + 0.5
    x_store = x_obj + box_w + 0.75
    need = max(s.n_cells * 0.5 if 0 < s.n_cells <= MAX_CELLS else 5.0 for s in layout.storages)
    store_w = min(_FIG_W - 0.3 - x_store, need)  # at most half an inch a cell, within _FIG_W
    fig_w = max(x_store + store_w + 0.3, 7.5)
    row_h = [max(box_h, len(o.names) * name_step) + 0.28 for o in layout.objects]
    strip_h, header_h, index_h, gap, top = 0.38, 0.32, 0.22, 0.3, 0.95
    height = top + 0.55 + sum(header_h + strip_h + index_h + sum(row_h[i] for i in s.objects) + gap
                              for s in layout.storages) - gap
    fig, ax = _canvas((fig_w, height), (0, fig_w), (0, height), left=0, bottom=0, right=1, top=1)
    fig.suptitle("names \u2192 tensor objects \u2192 storage" if title is None else title,
                 fontsize=14, y=1 - 0.12 / height, va="top")
    for x, w, text in ((0.2, name_col, "Python names"), (x_obj, box_w, "tensor objects"),
                       (x_store, store_w, "storages (memory)")):
        _text(ax, x + w / 2, height - 0.7, text, 10, "#555555", style="italic")
    y = height - top
    for s_index, s in enumerate(layout.storages):  # the storage's header and strip, then a row per object
        _text(ax, x_store, y - header_h / 2, f"storage {s_index}: {s.n_cells:,} \u00d7 "
              f"{dtype_name(s.cell_dtype)} = {format_bytes(s.nbytes)}"
              f"{'' if s.device == 'cpu' else f' on {s.device}'}", 10, "#333333", ha="left", fontweight="bold")
        y -= header_h
        bottom, cell_w = y - strip_h, min(0.5, store_w / max(s.n_cells, 1)) if 0 < s.n_cells <= MAX_CELLS else 0
        fits = cell_w and s.values is not None and all(len(v) * 8 * _MONO_CHAR < cell_w * 0.9 for v in s.values)
        strip_w = cell_w * s.n_cells if cell_w else store_w
        for c in range(s.n_cells) if cell_w else []:  # a cell each, with its value and its position
            ax.add_patch(Rectangle((x_store + c * cell_w, bottom), cell_w, strip_h, facecolor="#f2f2f2",
                                   edgecolor="#555555", lw=0.8))
            if fits:
                _text(ax, x_store + (c + 0.5) * cell_w, y - strip_h / 2, s.values[c], 8, family="monospace")
            _text(ax, x_store + (c + 0.5) * cell_w, bottom - 0.1, str(c), 6.5, "#777777")
        if cell_w:  # name the rows of numbers, left of the strip
            for row, label in ((y - strip_h / 2, "values"), (bottom - 0.1, "positions"))[0 if fits else 1:]:
                _text(ax, x_store - 0.08, row, label, 7, "#777777", ha="right", style="italic")
        else:  # one long strip, numbered at its ends
            ax.add_patch(Rectangle((x_store, bottom), store_w, strip_h, facecolor="#f2f2f2", edgecolor="#555555",
                                   lw=0.8))
            _text(ax, x_store, bottom - 0.1, "0", 6.5, "#777777", ha="left")
            _text(ax, x_store + store_w, bottom - 0.1, f"{s.n_cells:,}", 6.5, "#777777", ha="right")
        ax.add_patch(Rectangle((x_store, bottom), strip_w, strip_h, fill=False, lw=1.2, edgecolor="#333333",
                               gid=f"storage-{s_index}"))
        y -= strip_h + index_h
        for i in s.objects:  # the object's box; its names, with arrows; the arrow on; its marks on the row
            o, col, cy = layout.objects[i], _PALETTE[i % len(_PALETTE)], y - row_h[i] / 2
            by = cy - box_h / 2
            box(x_obj, by, box_w, box_h, 0.06, facecolor=_light(col, 0.88), edgecolor=col, lw=1.4, gid=f"object-{i}")
            ax.add_patch(Rectangle((x_obj, by + box_h - 0.26), box_w, 0.26, facecolor=col, edgecolor="none"))
            _text(ax, x_obj + box_w / 2, by + box_h - 0.13, f"tensor object {i}", 9, "white", fontweight="bold")
            _text(ax, x_obj + 0.14, by + box_h - 0.26 - 0.06, box_text[i], box_font, ha="left", va="top",
                  family="monospace", linespacing=1.35)
            for k, name in enumerate(o.names):  # stacked around the row centre
                ny = cy + (len(o.names) - 1 - 2 * k) * name_step / 2
                box(x_name, ny - name_h / 2, name_w, name_h, 0.08, facecolor="white", edgecolor="#333333", lw=1.0)
                _text(ax, x_name + name_w / 2, ny, name, name_font, family="monospace", fontweight="bold")
                arrow((x_name + name_w, ny), (x_obj, cy + (ny - cy) * 0.35), "#333333", 1.1, (2, 1))
            arrow((x_obj + box_w, cy), (x_store - 0.04, cy), col, 1.4, (1, 0))
            ax.plot([x_store, x_store + strip_w], [cy, cy], color=_light(col, 0.5), lw=1.0, zorder=1)
            if cell_w:  # faint guides down from the cells; a mark per covered cell, in the tensor's order
                for c in range(s.n_cells):
                    cx = x_store + (c + 0.5) * cell_w
                    ax.plot([cx, cx], [cy + mark_h / 2, bottom - 0.2], color="#dddddd", lw=0.6, zorder=0)
                where: dict[int, list[int]] = {}
                for logical, cell in enumerate(o.elements or ()):
                    where.setdefault(cell, []).append(logical)
                w = cell_w * o.cells_per_element
                for cell, logicals in where.items():
                    box(x_store + cell * cell_w + 0.1 * cell_w, cy - mark_h / 2, w - 0.2 * cell_w, mark_h, 0.05,
                        facecolor=col, edgecolor="none", zorder=2)
                    label = str(logicals[0]) if len(logicals) == 1 else f"\u00d7{len(logicals)}"
                    _text(ax, x_store + cell * cell_w + w / 2, cy, label, 7 if len(label) < 3 else 6, "white",
                          fontweight="bold", zorder=3)
            else:  # a long storage: a bar per covered range (hatched: only the span is known)
                scale = store_w / max(s.n_cells, 1)
                for start, stop in o.ranges:
                    ax.add_patch(Rectangle((x_store + start * scale, cy - mark_h / 2), max((stop - start) * scale,
                                           0.02), mark_h, facecolor=col if o.exact else _light(col, 0.6),
                                           edgecolor=col, hatch=None if o.exact else "////", lw=0.8, zorder=2))
                per = o.cells_per_element  # a cell is a byte when dtypes of several sizes share the storage
                note = (f"{sum(b - a for a, b in o.ranges) // per:,} of {s.n_cells // per:,} elements" if o.exact
                        else f"strided: {math.prod(o.shape):,} elements spread over this span")
                _text(ax, x_store + store_w, cy - mark_h / 2 - 0.06, note, 7, col, ha="right", va="top")
            y -= row_h[i]
        y -= gap
    _text(ax, 0.25, 0.3, "Grey numbers under a storage: where each element sits in memory.\nNumbers in the "
          "coloured marks: the tensor's own element order (row-major).", 8, "#555555", ha="left", linespacing=1.4)
    return _closed(fig, tight=False)


def plot_history(histories: Mapping[str, Any], *, title: str | None = None) -> Figure:
    """Loss per step (log scale) and test accuracy per epoch, a curve per ``History`` (later ones dashed,
    on top); ``time_s`` and ``peak_bytes``, when finite, go into the legend. Errors name ``histories`` and
    the field (``step_loss``; ``test_acc``: fractions in 0..1). Notebook 10, "The curves".

    >>> from types import SimpleNamespace as H
    >>> [ax.get_ylabel() for ax in plot_history({"alias": H(step_loss=[2.3, 1.1], test_acc=[0.9])}).axes]
    ['training loss (log scale)', 'test accuracy (%)']
    """
    require_named(histories, "histories", "History")
    require_optional_str(title, "title")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, PercentFormatter
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(9.6, 4.4))
    for k, (name, h) in enumerate(histories.items()):
        loss = _floats(getattr(h, "step_loss", None), f"histories[{name!r}].step_loss")
        acc = _floats(getattr(h, "test_acc", None), f"histories[{name!r}].test_acc", low=0)
        if max(acc) > 1:
            raise ValueError(f"histories[{name!r}].test_acc must hold fractions in 0..1 (not percent); got {acc}")
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
    """Per tensor size (``x.nbytes``): the bytes allocated for its clone, and the RSS delta seen (the y axis is
    symmetric-log, so 0 and negative deltas show); dotted: y = x. Errors name the argument: lists of equal
    length, sizes >= 1, exact counts >= 0, all finite. Notebook 07 (a Deeper cell).

    >>> plot_memory_comparison([4, 4096], [4, 4096], [0, -4096]).axes[0].get_yscale()
    'symlog'
    """
    sizes, exact = _floats(sizes_bytes, "sizes_bytes", low=1), _floats(exact_bytes, "exact_bytes", low=0)
    rss = _floats(rss_bytes, "rss_bytes", low=-math.inf)
    require_optional_str(title, "title")
    if not len(sizes) == len(exact) == len(rss):
        raise ValueError(f"sizes_bytes, exact_bytes and rss_bytes must have the same length; got {len(sizes)}, "
                         f"{len(exact)} and {len(rss)}")
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
    ("write", "question", "identity = x; then the branch runs.\nDoes anything write into x (or a view of x)\n"
                          "in place before the addition?\nx += ...   x.relu_()   nn.ReLU(inplace=True)\n"
                          "x[...] = ...   x.copy_(...)   out=x"),
    ("alias ok", "right", "identity = x is right, and free:\nnothing to fix, no clone needed\n"
                          "(the post's model, torchvision's blocks)."),
    ("leaf", "question", "Is x a leaf that requires grad, or a view\nautograd guards? (a view of such a leaf;\n"
                         "an output of chunk, split, unbind;\na view made under no_grad)"),
    ("leaf error", "error", "RuntimeError at the write,\nclone or not.\nFix: make the write out of place."),
    ("saved", "question", "Did autograd save x, or a tensor that\nshares its version counter (its base, a view),\n"
                          "before the write? (relu, sigmoid, exp save\ntheir output; conv, mul save their input)"),
    ("saved error", "error", "RuntimeError at backward\n(\"modified by an inplace operation\"),\n"
                             "clone or not.\nFix: make the write out of place."),
    ("silent", "silent", "x came from add, mul, conv, batch norm ...:\nno error, but identity sees the write:\n"
                         "a silently different model.\nFix: make the write out of place, or\n"
                         "identity = x.clone() (costs x.nbytes;\nx itself is still overwritten)."),
)
# name -> (centre x, centre y, height) of its box; the arrows as (from, to, label)
_CHART_AT = {"write": (2.3, 9.05, 1.6), "alias ok": (7.6, 9.05, 1.0), "leaf": (2.3, 6.95, 1.2),
             "leaf error": (7.6, 6.95, 1.0), "saved": (2.3, 4.8, 1.45), "saved error": (7.6, 4.8, 1.2),
             "silent": (2.3, 1.85, 1.85)}
_CHART_ARROWS = (("write", "alias ok", "no"), ("write", "leaf", "yes"), ("leaf", "leaf error", "yes"),
                 ("leaf", "saved", "no"), ("saved", "saved error", "yes"), ("saved", "silent", "no"))


def decision_chart() -> Figure:
    """A closed Figure, 950 px wide: the decision chart "do I need ``identity = x.clone()``?" of notebooks 08
    ("A rule of thumb") and 11. "Make the write out of place": ``nn.ReLU(inplace=False)``, ``F.relu(x)``, ``x = x + y`` not ``x += y``.

    >>> sorted(t.get_text() for t in decision_chart().axes[0].texts if t.get_text() in ("yes", "no"))
    ['no', 'no', 'no', 'yes', 'yes', 'yes']
    """
    from matplotlib.patches import FancyBboxPatch
    fig, ax = _canvas((9.5, 6.6), (0, 10), (0.75, 10.0), left=0.01, right=0.99, bottom=0.01, top=0.95)
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


def memory_timeline(report: Any, mark: str = "aten::clone") -> tuple[list[int], list[tuple[int, int]]]:
    """From a CPU ``measure()`` report: bytes live after each event, and the sorted lifetimes (first event,
    last event) of the allocations whose root op is ``mark`` (one that ends at the last event may still be
    alive). TypeError naming ``report`` for anything else. Notebooks 07 and 09.

    >>> from clonelab import measure; x = torch.ones(100)
    >>> with measure() as m:
    ...     c = x.clone(); y = c + c; del c
    >>> memory_timeline(m)
    ([400, 800, 400], [(0, 1)])
    """
    if getattr(report, "device", None) != "cpu" or not isinstance(getattr(report, "trace", None), list):
        raise TypeError(f"report must be what `with measure() as report` gives on the CPU, got {report!r:.60}")
    last = len(report.trace) - 1
    spans = [(a.start, last if a.end is None else a.end - 1) for a in allocation_lifetimes(report) if a.root == mark]
    return list(itertools.accumulate(nbytes for *_, nbytes in report.trace)), sorted(spans)


def plot_memory_timeline(reports: Mapping[str, Any], *, mark: str = "aten::clone", title: str | None = None) -> Figure:
    """Bytes live over each measured block, a line per report (dotted: backward starts), and below, a bar per
    allocation whose root op is ``mark``, from allocation to free. ``reports``: a dict of name -> ``measure()``
    report. 950 px wide. Notebooks 07 ("A clone in a residual block") and 09 ("What the clone costs").

    >>> from clonelab import measure
    >>> with measure() as m:
    ...     y = torch.ones(100).clone() * 2
    >>> [ax.get_ylabel() for ax in plot_memory_timeline({"clone": m}).axes]
    ['bytes live (MiB)', 'clones']
    """
    require_named(reports, "reports", "report from `with measure() as report`")
    require_optional_str(title, "title")
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
    top.grid(alpha=0.3)
    bottom.set_ylabel("clones" if mark == "aten::clone" else mark)
    bottom.set_yticks(range(len(timelines)), list(timelines))
    bottom.set(ylim=(-0.7, len(timelines) - 0.3), xlabel="allocation and free events, in order")
    bottom.grid(alpha=0.3, axis="x")
    fig.suptitle(title or "Bytes live during the block; bars: how long each clone lives", fontsize=11)
    return _closed(fig)


@dataclasses.dataclass(frozen=True)
class VersionSnapshot:
    """The ``_version`` and values of some named tensors at one moment, under a label."""
    label: str
    rows: tuple[tuple[str, int, tuple[float, ...]], ...]  # (name, version, values)


def version_snapshot(tensors: Mapping[str, torch.Tensor], label: str) -> VersionSnapshot:
    """``t._version`` and the first 6 values of each named tensor, after the step ``label``; errors name
    ``tensors``. Notebook 04, "Aliases see every mutation".

    >>> x = torch.zeros(2); y = x
    >>> x += 1
    >>> version_snapshot({"x": x, "y = x": y}, "x += 1").rows
    (('x', 1, (1.0, 1.0)), ('y = x', 1, (1.0, 1.0)))
    """
    require_named(tensors, "tensors", "tensor", require_dense_tensor)
    if odd := [name for name, t in tensors.items() if t.is_meta or t.is_complex()]:
        raise ValueError(f"tensors[{odd[0]!r}] must hold real values to show, not meta or complex ones")
    return VersionSnapshot(label, tuple((name, version_of(t), tuple(float(v) for v in t.detach().reshape(-1)[:6].tolist()))
                                        for name, t in tensors.items()))


def plot_versions(snapshots: Sequence[VersionSnapshot], *, title: str | None = None) -> Figure:
    """A grid of ``_version`` and values, a row per tensor and a column per snapshot; orange: the version
    went up in that step. TypeError unless ``snapshots`` is a non-empty list of :func:`version_snapshot`
    results; ValueError unless they name the same tensors. Notebook 04.

    >>> x = torch.zeros(2); c = x.clone()
    >>> shots = [version_snapshot({"x": x, "c": c}, "start")]
    >>> x += 1
    >>> shots.append(version_snapshot({"x": x, "c": c}, "x += 1"))
    >>> len(plot_versions(shots).axes[0].patches)
    4
    """
    if not (isinstance(snapshots, Sequence) and snapshots and all(isinstance(s, VersionSnapshot) for s in snapshots)):
        raise TypeError("snapshots must be a non-empty list of version_snapshot(...) results")
    names = [name for name, _, _ in snapshots[0].rows]
    if any([name for name, _, _ in s.rows] != names for s in snapshots):
        raise ValueError("every snapshot must name the same tensors, in the same order")
    require_optional_str(title, "title")
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
