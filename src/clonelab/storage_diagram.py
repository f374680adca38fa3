"""The picture of notebooks 01-03: Python names -> tensor objects -> storages, drawn from real tensors."""

from __future__ import annotations

import collections
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import torch

from clonelab._checks import require_dense_tensor, require_named, storage_key
from clonelab._figure import _FIG_W, _MONO_CHAR, _PALETTE, _canvas, _closed, _light, _text
from clonelab._util import dtype_name, format_bytes
from clonelab.inspection import storage_positions

if TYPE_CHECKING:  # only for type hints: matplotlib is imported when a figure is drawn
    from matplotlib.figure import Figure

MAX_CELLS = 24  # storages up to this many elements are drawn cell by cell
_MAX_EXACT = 4096  # tensors up to this many elements get their exact element set


# What plot_storage draws. An object: its tensor's layout; its elements' positions in cells (None when too many);
# the covered cells as [start, stop) runs (only the span when not exact). A storage: cells of its tensors' smallest
# dtype; values: their labels when few, real and not meta. A layout: name -> object index, objects, storages.
_Object = collections.namedtuple("_Object", "names shape stride storage_offset dtype storage elements "
                                            "cells_per_element ranges exact")
_Storage = collections.namedtuple("_Storage", "nbytes cell_dtype n_cells device objects values")
_Layout = collections.namedtuple("_Layout", "names objects storages")


def _cell_text(v: Any) -> str:
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
    objects, storages, item_bytes = [], [], lambda dt: torch.empty(0, dtype=dt).element_size()
    for s_index, ts in enumerate(by_storage.values()):
        first = next(iter(ts.values()))
        cell_dtype, storage = min((t.dtype for t in ts.values()), key=item_bytes), first.untyped_storage()
        n_cells, values = storage.nbytes() // item_bytes(cell_dtype), None
        if n_cells <= MAX_CELLS and first.device.type != "meta":
            flat = torch.empty(0, dtype=cell_dtype, device=first.device)
            with torch.no_grad():
                flat.set_(storage, 0, (n_cells,), (1,))
            values = None if flat.is_complex() else tuple(_cell_text(v) for v in flat.cpu().tolist())
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


def plot_storage(tensors: Mapping[str, torch.Tensor], *, title: str | None = None) -> Figure:
    """Draw names -> tensor objects -> storages, each object's marks numbered in its element order (notebooks 01-03).

    >>> len(plot_storage({"a": torch.arange(6.0)}, title="one tensor").axes)
    1
    """
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
