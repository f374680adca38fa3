"""Pictures for the series: names -> tensors -> storage, training curves, memory.

Every figure is made with pyplot and closed before it is returned, so in
Jupyter it shows once, as the value of the cell.

>>> import torch
>>> a = torch.arange(6.0)
>>> layout = storage_layout({"a": a, "b": a, "d": a[1::2]})
>>> layout.names
{'a': 0, 'b': 0, 'd': 1}
>>> layout.objects[1].elements
(1, 3, 5)
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch

from clonelab.inspection import storage_positions
from clonelab._checks import require_optional_str, storage_key
from clonelab._util import format_bytes

if TYPE_CHECKING:  # only for type hints: matplotlib is imported when a figure is drawn
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "StorageLayout",
    "StorageRow",
    "TensorObject",
    "VersionSnapshot",
    "decision_chart",
    "memory_timeline",
    "plot_history",
    "plot_memory_timeline",
    "plot_memory_comparison",
    "plot_storage",
    "plot_versions",
    "storage_layout",
    "version_snapshot",
]

MAX_CELLS = 24  # storages up to this many elements are drawn cell by cell
_MAX_EXACT = 4096  # tensors up to this many elements get their exact element set
_MAX_OBJECTS = 20  # more tensor objects than this do not fit a readable figure


# --------------------------------------------------------------------------
# Small shared helpers
# --------------------------------------------------------------------------


def _as_floats(values: Any, argname: str) -> list[float]:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().reshape(-1).tolist()
    elif hasattr(values, "tolist") and not isinstance(values, (str, bytes)):
        values = values.tolist()  # a NumPy array
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{argname} must be a sequence of numbers; got {type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"{argname}[{i}] must be a number; got {type(v).__name__} ({v!r})")
        out.append(float(v))
    if not out:
        raise ValueError(f"{argname} must not be empty")
    return out


# --------------------------------------------------------------------------
# names -> tensor objects -> storage
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TensorObject:
    """One distinct tensor object, and where its elements live in its storage.

    ``elements`` lists, in the tensor's own (row-major) element order, the
    storage position of each element, in units of the storage's cells; it is
    None for tensors too big to list. ``ranges`` are the covered cells as
    ``[start, stop)`` runs; when ``exact`` is False only the span is known.

    >>> import torch
    >>> storage_layout({"t": torch.zeros(2, 3).t()}).objects[0].elements
    (0, 3, 1, 4, 2, 5)
    """

    index: int
    names: tuple[str, ...]
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    storage_offset: int
    dtype: torch.dtype
    storage: int
    numel: int
    elements: tuple[int, ...] | None
    cells_per_element: int
    ranges: tuple[tuple[int, int], ...]
    exact: bool


@dataclasses.dataclass(frozen=True)
class StorageRow:
    """One distinct storage: its size, how it is cut into cells, and its values.

    Cells are elements of ``cell_dtype`` (the smallest dtype among the
    tensors that use the storage). ``values`` holds short labels of the
    cell values for small CPU/CUDA storages, and None otherwise.

    >>> import torch
    >>> storage_layout({"a": torch.arange(3.0)}).storages[0].values
    ('0', '1', '2')
    """

    index: int
    nbytes: int
    cell_dtype: torch.dtype
    n_cells: int
    device: str
    objects: tuple[int, ...]
    values: tuple[str, ...] | None


@dataclasses.dataclass(frozen=True)
class StorageLayout:
    """What :func:`plot_storage` draws, computed from the tensors themselves.

    ``names`` maps each name to the index of its tensor object in
    ``objects``; each object's ``storage`` indexes ``storages``.

    >>> import torch
    >>> a = torch.arange(6.0)
    >>> lay = storage_layout({"a": a, "e": a.clone()})
    >>> len(lay.objects), len(lay.storages)
    (2, 2)
    """

    names: dict[str, int]
    objects: tuple[TensorObject, ...]
    storages: tuple[StorageRow, ...]


def _is_dense(shape: Sequence[int], stride: Sequence[int]) -> bool:
    # a permutation of a contiguous layout: covers its span with no gaps
    expected = 1
    for st, size in sorted((st, s) for s, st in zip(shape, stride) if s != 1):
        if st != expected:
            return False
        expected *= size
    return True


def _runs(cells: list[int]) -> tuple[tuple[int, int], ...]:
    runs: list[list[int]] = []
    for c in sorted(set(cells)):
        if runs and c == runs[-1][1]:
            runs[-1][1] = c + 1
        else:
            runs.append([c, c + 1])
    return tuple((a, b) for a, b in runs)


def _value_label(v: Any) -> str:
    if isinstance(v, bool):
        return "T" if v else "F"
    if isinstance(v, float):
        if v == int(v) and abs(v) < 1e5:
            return str(int(v))
        return f"{v:.3g}"
    return str(v)


def storage_layout(tensors: Mapping[str, torch.Tensor]) -> StorageLayout:
    """Work out which names share a tensor object, and which objects share storage.

    Objects are told apart by ``id()``, storages by the storage object
    itself (this works for ``meta`` tensors too). For each object it lists
    the storage cells its elements occupy, from its shape, stride and
    storage offset.

    >>> import torch
    >>> a = torch.arange(6.0)
    >>> lay = storage_layout({"a": a, "b": a, "c": a.view(2, 3), "d": a[1::2], "e": a.clone()})
    >>> lay.names
    {'a': 0, 'b': 0, 'c': 1, 'd': 2, 'e': 3}
    >>> [o.storage for o in lay.objects]
    [0, 0, 0, 1]
    """
    if not isinstance(tensors, Mapping):
        raise TypeError(
            "tensors must be a dict of name -> tensor, e.g. {'a': a, 'b': b}; "
            f"got {type(tensors).__name__}"
        )
    if not tensors:
        raise ValueError("tensors must name at least one tensor")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensors keys must be str names; got {name!r}")
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"tensors[{name!r}] must be a torch.Tensor; got {type(t).__name__}")
        if t.layout != torch.strided:
            raise ValueError(
                f"tensors[{name!r}] has layout {t.layout}; only strided (ordinary) tensors "
                "have one storage to draw"
            )

    # distinct objects, in order of first appearance; names grouped per object
    obj_names: dict[int, list[str]] = {}
    obj_tensor: dict[int, torch.Tensor] = {}
    for name, t in tensors.items():
        obj_names.setdefault(id(t), []).append(name)
        obj_tensor[id(t)] = t
    if len(obj_names) > _MAX_OBJECTS:
        raise ValueError(
            f"tensors holds {len(obj_names)} distinct tensor objects; at most {_MAX_OBJECTS} "
            "fit in a readable picture"
        )
    storage_of: dict[tuple, list[int]] = {}
    for oid, t in obj_tensor.items():
        storage_of.setdefault(storage_key(t), []).append(oid)

    # storages in order of first appearance, and objects grouped by storage
    # (so each storage's rows are drawn together)
    order = [oid for oids in storage_of.values() for oid in oids]
    obj_index = {oid: i for i, oid in enumerate(order)}
    objects: list[TensorObject] = []
    storages: list[StorageRow] = []
    for s_index, oids in enumerate(storage_of.values()):
        first = obj_tensor[oids[0]]
        storage = first.untyped_storage()
        cell_dtype = min((obj_tensor[o].dtype for o in oids),
                         key=lambda dt: torch.empty(0, dtype=dt).element_size())
        cell_bytes = torch.empty(0, dtype=cell_dtype).element_size()
        n_cells = storage.nbytes() // cell_bytes
        values = None
        if n_cells <= MAX_CELLS and first.device.type != "meta":
            with torch.no_grad():
                flat = torch.empty(0, dtype=cell_dtype, device=first.device)
                flat.set_(storage, 0, (n_cells,), (1,))
                if not flat.is_complex():
                    values = tuple(_value_label(v) for v in flat.cpu().tolist())
        storages.append(StorageRow(s_index, storage.nbytes(), cell_dtype, n_cells,
                                   str(first.device), tuple(obj_index[o] for o in oids), values))
        for oid in oids:
            t = obj_tensor[oid]
            per = t.element_size() // cell_bytes  # cells per element of this tensor
            numel = t.numel()
            elements = None
            if numel == 0:
                ranges, exact, elements = (), True, ()
            elif numel <= _MAX_EXACT:
                elements = tuple(p * per for p in storage_positions(t))
                ranges = _runs([e + k for e in elements for k in range(per)])
                exact = True
            else:
                last = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
                ranges = ((t.storage_offset() * per, (last + 1) * per),)
                exact = _is_dense(t.shape, t.stride())
            objects.append(TensorObject(
                index=obj_index[oid], names=tuple(obj_names[oid]), shape=tuple(t.shape),
                stride=tuple(t.stride()), storage_offset=t.storage_offset(), dtype=t.dtype,
                storage=s_index, numel=numel, elements=elements, cells_per_element=per,
                ranges=ranges, exact=exact,
            ))
    names = {name: obj_index[id(t)] for name, t in tensors.items()}
    return StorageLayout(names, tuple(objects), tuple(storages))


# Drawing: all sizes in inches. One axes fills the figure and its data units
# are inches, so text (in points) and boxes scale together.
_FIG_W = 9.6  # inches: 960 px at the 100 dpi of JupyterLab's inline figures, under a 1000 px column
_MONO_CHAR = 0.6 / 72  # inches per point of font size, DejaVu Sans Mono
_PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
            "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]


def _light(color: str, amount: float = 0.82) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(color)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def _dtype_name(dt: torch.dtype) -> str:
    return str(dt).removeprefix("torch.")


def _tuple_text(t: Sequence[int]) -> str:
    return "(" + ", ".join(str(v) for v in t) + ("," if len(t) == 1 else "") + ")"


def plot_storage(tensors: Mapping[str, torch.Tensor], *, title: str | None = None) -> Figure:
    """Draw Python names -> tensor objects -> storage, from the tensors themselves.

    Left: the names. Middle: one box per distinct tensor object (names bound
    to the same object point to one box) with its shape, stride, storage
    offset and dtype. Right: one strip per distinct storage; each object's
    row marks the storage elements it covers, numbered in the object's own
    element order (so ``x.t()`` or ``x[:, 1]`` shows its stride).

    >>> import torch
    >>> a = torch.arange(6.0)
    >>> fig = plot_storage({"a": a, "b": a, "c": a.view(2, 3), "d": a[1::2], "e": a.clone()})
    >>> len(fig.axes)
    1
    """
    require_optional_str(title, "title")
    layout = storage_layout(tensors)
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

    # --- sizes
    name_font, box_font = 11.0, 9.0
    name_w = max(len(n) for n in layout.names) * name_font * _MONO_CHAR + 0.3
    name_h, name_step = 0.3, 0.4
    box_lines = [
        [f"shape   {_tuple_text(o.shape)}", f"stride  {_tuple_text(o.stride)}",
         f"offset  {o.storage_offset}", f"dtype   {_dtype_name(o.dtype)}"]
        for o in layout.objects
    ]
    box_w = max(max(len(s) for s in lines) for lines in box_lines) * box_font * _MONO_CHAR + 0.3
    box_w = max(box_w, 1.7)
    line_h = 1.35 * box_font / 72
    box_h = 0.26 + 4 * line_h + 0.12  # header band, four lines, padding

    name_w = max(name_w, 0.6)
    name_col = max(name_w, 1.15)  # wide enough for its column header
    x_name = 0.2 + (name_col - name_w) / 2
    x_obj = 0.2 + name_col + 0.5
    x_store = x_obj + box_w + 0.75
    # as wide as the storages need (at most half an inch a cell), within _FIG_W
    need = max(s.n_cells * 0.5 if 0 < s.n_cells <= MAX_CELLS else 5.0 for s in layout.storages)
    store_w = min(_FIG_W - 0.3 - x_store, need)
    fig_w = max(x_store + store_w + 0.3, 7.5)

    row_h = {o.index: max(box_h, len(o.names) * name_step) + 0.28 for o in layout.objects}
    strip_h, header_h, index_h, storage_gap = 0.38, 0.32, 0.22, 0.3
    top = 0.55 + 0.4  # title, column headers
    foot = 0.55
    height = top + foot + sum(
        header_h + strip_h + index_h + sum(row_h[i] for i in s.objects) + storage_gap
        for s in layout.storages
    ) - storage_gap

    fig = plt.figure(figsize=(fig_w, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, fig_w)
    ax.set_ylim(0, height)
    ax.set_axis_off()

    fig.suptitle("names \u2192 tensor objects \u2192 storage" if title is None else title,
                 fontsize=14, y=1 - 0.12 / height, va="top")
    y_cols = height - 0.7
    for x, w, text in ((0.2, name_col, "Python names"), (x_obj, box_w, "tensor objects"),
                       (x_store, store_w, "storages (memory)")):
        ax.text(x + w / 2, y_cols, text, ha="center", va="center", fontsize=10,
                color="#555555", style="italic")

    color = {o.index: _PALETTE[o.index % len(_PALETTE)] for o in layout.objects}
    y = height - top
    for s in layout.storages:
        # --- the storage header and its strip of cells
        cell_mode = s.n_cells <= MAX_CELLS and s.n_cells > 0
        dev = "" if s.device == "cpu" else f" on {s.device}"
        ax.text(x_store, y - header_h / 2,
                f"storage {s.index}: {s.n_cells:,} \u00d7 {_dtype_name(s.cell_dtype)}"
                f" = {format_bytes(s.nbytes)}{dev}",
                ha="left", va="center", fontsize=10, fontweight="bold", color="#333333")
        y -= header_h
        strip_top = y
        cell_w = min(0.5, store_w / max(s.n_cells, 1)) if cell_mode else 0.0
        if cell_mode:
            fits = s.values is not None and all(
                len(v) * 8 * _MONO_CHAR < cell_w * 0.9 for v in s.values)
            for c in range(s.n_cells):
                cx = x_store + c * cell_w
                ax.add_patch(Rectangle((cx, y - strip_h), cell_w, strip_h, facecolor="#f2f2f2",
                                       edgecolor="#555555", lw=0.8))
                if fits:
                    ax.text(cx + cell_w / 2, y - strip_h / 2, s.values[c], ha="center",
                            va="center", fontsize=8, family="monospace")
                ax.text(cx + cell_w / 2, y - strip_h - 0.1, str(c), ha="center", va="center",
                        fontsize=6.5, color="#777777")
            # name the two rows of numbers, in the empty space left of the strip
            if fits:
                ax.text(x_store - 0.08, y - strip_h / 2, "values", ha="right", va="center",
                        fontsize=7, color="#777777", style="italic")
            ax.text(x_store - 0.08, y - strip_h - 0.1, "positions", ha="right", va="center",
                    fontsize=7, color="#777777", style="italic")
        else:
            ax.add_patch(Rectangle((x_store, y - strip_h), store_w, strip_h,
                                   facecolor="#f2f2f2", edgecolor="#555555", lw=0.8))
            for frac, label, ha in ((0, "0", "left"), (1, f"{s.n_cells:,}", "right")):
                ax.text(x_store + frac * store_w, y - strip_h - 0.1, label, ha=ha,
                        va="center", fontsize=6.5, color="#777777")
        strip = Rectangle((x_store, y - strip_h), cell_w * s.n_cells if cell_mode else store_w,
                          strip_h, fill=False, lw=1.2, edgecolor="#333333")
        strip.set_gid(f"storage-{s.index}")
        ax.add_patch(strip)
        y -= strip_h + index_h

        # --- one row per tensor object using this storage
        for i in s.objects:
            o = layout.objects[i]
            cy = y - row_h[i] / 2
            col = color[i]
            # the object box
            bx, by = x_obj, cy - box_h / 2
            box = FancyBboxPatch((bx, by), box_w, box_h, boxstyle="round,pad=0,rounding_size=0.06",
                                 facecolor=_light(col, 0.88), edgecolor=col, lw=1.4)
            box.set_gid(f"object-{o.index}")
            ax.add_patch(box)
            ax.add_patch(Rectangle((bx, by + box_h - 0.26), box_w, 0.26, facecolor=col,
                                   edgecolor="none"))
            ax.text(bx + box_w / 2, by + box_h - 0.13, f"tensor object {o.index}",
                    ha="center", va="center", fontsize=9, color="white", fontweight="bold")
            ax.text(bx + 0.14, by + box_h - 0.26 - 0.06, "\n".join(box_lines[i]),
                    ha="left", va="top", fontsize=box_font, family="monospace",
                    linespacing=1.35)
            # the names, stacked around the row centre, each with an arrow
            n = len(o.names)
            for k, name in enumerate(o.names):
                ny = cy + (n - 1 - 2 * k) * name_step / 2
                ax.add_patch(FancyBboxPatch((x_name, ny - name_h / 2), name_w, name_h,
                                            boxstyle="round,pad=0,rounding_size=0.08",
                                            facecolor="white", edgecolor="#333333", lw=1.0))
                ax.text(x_name + name_w / 2, ny, name, ha="center", va="center",
                        fontsize=name_font, family="monospace", fontweight="bold")
                ax.add_patch(FancyArrowPatch((x_name + name_w, ny),
                                             (x_obj, cy + (ny - cy) * 0.35),
                                             arrowstyle="-|>", mutation_scale=12,
                                             color="#333333", lw=1.1, shrinkA=2, shrinkB=1))
            # the arrow to the storage, and the object's track under the strip
            ax.add_patch(FancyArrowPatch((bx + box_w, cy), (x_store - 0.04, cy),
                                         arrowstyle="-|>", mutation_scale=12, color=col,
                                         lw=1.4, shrinkA=1, shrinkB=0))
            _draw_track(ax, o, s, cy, x_store, store_w, cell_w, strip_top - strip_h, col)
            y -= row_h[i]
        y -= storage_gap

    ax.text(0.25, 0.3,
            "Grey numbers under a storage: where each element sits in memory.\n"
            "Numbers in the coloured marks: the tensor's own element order (row-major).",
            ha="left", va="center", fontsize=8, color="#555555", linespacing=1.4)
    plt.close(fig)  # the returned Figure displays once, as the cell's value
    return fig


def _draw_track(ax: Axes, o: TensorObject, s: StorageRow, cy: float, x0: float,
                store_w: float, cell_w: float, strip_bottom: float, col: str) -> None:
    from matplotlib.patches import FancyBboxPatch, Rectangle

    mark_h = 0.28
    if cell_w:  # one mark per covered cell, numbered in the tensor's own order
        span = cell_w * s.n_cells
        ax.plot([x0, x0 + span], [cy, cy], color=_light(col, 0.5), lw=1.0, zorder=1)
        for c in range(s.n_cells):  # faint guides down from the cells
            cx = x0 + (c + 0.5) * cell_w
            ax.plot([cx, cx], [cy + mark_h / 2, strip_bottom - 0.2], color="#dddddd",
                    lw=0.6, zorder=0)
        where: dict[int, list[int]] = {}
        for logical, cell in enumerate(o.elements or ()):
            where.setdefault(cell, []).append(logical)
        for cell, logicals in where.items():
            w = cell_w * o.cells_per_element
            ax.add_patch(FancyBboxPatch(
                (x0 + cell * cell_w + 0.1 * cell_w, cy - mark_h / 2), w - 0.2 * cell_w, mark_h,
                boxstyle="round,pad=0,rounding_size=0.05", facecolor=col, edgecolor="none",
                zorder=2))
            label = str(logicals[0]) if len(logicals) == 1 else f"\u00d7{len(logicals)}"
            ax.text(x0 + cell * cell_w + w / 2, cy, label, ha="center", va="center",
                    fontsize=7 if len(label) < 3 else 6, color="white", fontweight="bold",
                    zorder=3)
        return
    # a long storage: a bar with the covered ranges
    ax.plot([x0, x0 + store_w], [cy, cy], color=_light(col, 0.5), lw=1.0, zorder=1)
    scale = store_w / max(s.n_cells, 1)
    for start, stop in o.ranges:
        ax.add_patch(Rectangle(
            (x0 + start * scale, cy - mark_h / 2), max((stop - start) * scale, 0.02), mark_h,
            facecolor=col if o.exact else _light(col, 0.6), edgecolor=col,
            hatch=None if o.exact else "////", lw=0.8, zorder=2))
    covered = sum(b - a for a, b in o.ranges) if o.exact else None
    note = (f"{covered:,} of {s.n_cells:,} elements" if covered is not None
            else f"strided: {o.numel:,} elements spread over this span")
    ax.text(x0 + store_w, cy - mark_h / 2 - 0.06, note, ha="right", va="top", fontsize=7,
            color=col)


# --------------------------------------------------------------------------
# Training curves
# --------------------------------------------------------------------------


def plot_history(histories: Mapping[str, Any], *, title: str | None = None) -> Figure:
    """Training loss per step (log scale) and test accuracy per epoch, per variant.

    Each value needs ``step_loss`` (a loss per step) and ``test_acc`` (a
    fraction in 0..1 per epoch), like ``clonelab.training``'s ``History``;
    ``time_s`` and ``peak_bytes``, when present, go into the legend.
    Identical curves stay visible: later variants are drawn dashed on top.

    >>> from types import SimpleNamespace as H
    >>> fig = plot_history({"alias": H(step_loss=[2.3, 1.1, 0.4], test_acc=[0.8, 0.9])})
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['training loss (log scale)', 'test accuracy (%)']
    """
    if not isinstance(histories, Mapping):
        raise TypeError(
            "histories must be a dict of name -> History, e.g. {'alias': h1, 'clone': h2}; "
            f"got {type(histories).__name__}"
        )
    if not histories:
        raise ValueError("histories must hold at least one history")
    require_optional_str(title, "title")
    rows = []
    for name, h in histories.items():
        if not isinstance(name, str):
            raise TypeError(f"histories keys must be str names; got {name!r}")
        for attr in ("step_loss", "test_acc"):
            if not hasattr(h, attr):
                raise TypeError(
                    f"histories[{name!r}] has no attribute {attr!r}; pass History objects "
                    "from clonelab.training (step_loss, test_acc, ...)"
                )
        loss = _as_floats(h.step_loss, f"histories[{name!r}].step_loss")
        acc = _as_floats(h.test_acc, f"histories[{name!r}].test_acc")
        if any(not 0.0 <= a <= 1.0 for a in acc):
            raise ValueError(
                f"histories[{name!r}].test_acc must hold fractions in 0..1 (not percent); "
                f"got {acc}"
            )
        extras = []
        for attr, fmt in (("time_s", lambda v: f"{v:.1f} s"),
                          ("peak_bytes", lambda v: f"peak {format_bytes(v)}")):
            v = getattr(h, attr, None)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"histories[{name!r}].{attr} must be a number or None; got {v!r}")
            if math.isfinite(v):
                extras.append(fmt(v))
        rows.append((name, loss, acc, extras))

    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(9.6, 4.4))
    styles = ["-", "--", ":", "-."]
    for k, (name, loss, acc, extras) in enumerate(rows):
        color = _PALETTE[k % len(_PALETTE)]
        # later curves thinner and dashed, on top, so equal curves both show
        style = dict(color=color, ls=styles[k % len(styles)], lw=max(2.4 - 0.6 * k, 1.0),
                     zorder=2 + k)
        steps = range(1, len(loss) + 1)
        ax_loss.plot(steps, loss, **style, alpha=0.9)
        epochs = range(1, len(acc) + 1)
        label = f"{name}: {100 * acc[-1]:.1f}% test" + "".join(f", {e}" for e in extras)
        ax_acc.plot(epochs, [100 * a for a in acc], marker="o", ms=6 - k, **style, label=label)
    ax_loss.set_yscale("log")
    ax_loss.set_xlabel("training step")
    ax_loss.set_ylabel("training loss (log scale)")
    ax_loss.set_title("training loss per step")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("test accuracy (%)")
    ax_acc.set_title("test accuracy per epoch")
    ax_acc.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_acc.yaxis.set_major_formatter(PercentFormatter(decimals=0))
    for ax in (ax_loss, ax_acc):
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle("Training history" if title is None else title, fontsize=13)
    fig.legend(loc="lower center", ncol=min(len(rows), 2), fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.06 + 0.05 * ((len(rows) - 1) // 2), 1, 1))
    plt.close(fig)
    return fig


# --------------------------------------------------------------------------
# Exact bytes vs RSS
# --------------------------------------------------------------------------


def _byte_ticks(lo: float, hi: float, step: int) -> list[float]:
    ticks, t = [], 1.0
    while t <= hi * 1.0001:
        if t >= lo * 0.9999:
            ticks.append(t)
        t *= step
    return ticks


def plot_memory_comparison(
    sizes_bytes: Sequence[float],
    exact_bytes: Sequence[float],
    rss_bytes: Sequence[float],
    *,
    title: str | None = None,
) -> Figure:
    """Plot, per tensor size, the exact cost of a clone and the RSS delta that was seen.

    ``sizes_bytes`` are the tensor sizes (``x.nbytes``), ``exact_bytes`` the
    bytes the allocator really handed out for the clone, and ``rss_bytes``
    the change in process RSS that ``memory_profiler`` reported (which can be
    0 or negative). The y axis is symmetric-log so zero and negative deltas
    are shown, not hidden; the dotted line is y = x.

    >>> fig = plot_memory_comparison([4, 4096, 4 * 2**20], [4, 4096, 4 * 2**20], [0, -2**20, 5 * 2**20])
    >>> fig.axes[0].get_xscale(), fig.axes[0].get_yscale()
    ('log', 'symlog')
    """
    sizes = _as_floats(sizes_bytes, "sizes_bytes")
    exact = _as_floats(exact_bytes, "exact_bytes")
    rss = _as_floats(rss_bytes, "rss_bytes")
    require_optional_str(title, "title")
    if not len(sizes) == len(exact) == len(rss):
        raise ValueError(
            "sizes_bytes, exact_bytes and rss_bytes must have the same length; got "
            f"{len(sizes)}, {len(exact)} and {len(rss)}"
        )
    if any(not (math.isfinite(s) and s > 0) for s in sizes):
        raise ValueError("sizes_bytes must all be positive byte counts")
    if any(not (math.isfinite(e) and e >= 0) for e in exact):
        raise ValueError("exact_bytes must all be byte counts >= 0")
    if any(not math.isfinite(r) for r in rss):
        raise ValueError("rss_bytes must all be finite (0 and negative deltas are fine)")

    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    fig, ax = plt.subplots(figsize=(9, 6))
    lo, hi = min(sizes), max(sizes)
    ref = [lo / 2, hi * 2]
    ax.plot(ref, ref, ls=":", color="#888888", lw=1.2, label="y = x (what a clone costs)",
            zorder=1)
    ax.plot(sizes, exact, "-o", color=_PALETTE[0], lw=2, ms=5,
            label="exact count: bytes allocated", zorder=3)
    pos = [(s, r) for s, r in zip(sizes, rss) if r > 0]
    zero = [s for s, r in zip(sizes, rss) if r == 0]
    neg = [(s, r) for s, r in zip(sizes, rss) if r < 0]
    if pos:
        ax.plot(*zip(*pos), "s", color=_PALETTE[1], ms=7, alpha=0.85,
                label="memory_profiler: RSS delta", zorder=4)
    if zero:
        ax.plot(zero, [0] * len(zero), "o", mfc="white", mec=_PALETTE[1], mew=1.6, ms=8,
                label="RSS delta = 0 (nothing seen)", zorder=4)
    if neg:
        ax.plot(*zip(*neg), "v", color=_PALETTE[4], ms=8,
                label="RSS delta < 0 (it shrank)", zorder=4)

    ax.set_xscale("log")
    # symlog: logarithmic above 1 byte in size, linear through 0, mirrored below
    ax.set_yscale("symlog", linthresh=1.0, linscale=0.6)
    ax.set_xlim(lo / 2, hi * 2)
    ymax = max(max(exact), max(rss), hi) * 4
    ymin = min(rss + [0.0])
    ax.set_ylim(ymin * 4 if ymin < 0 else -0.8, ymax)

    fmt = FuncFormatter(lambda v, _: format_bytes(v) if v else "0")
    ax.xaxis.set_major_locator(FixedLocator(_byte_ticks(lo / 2, hi * 2, 32)))
    ax.xaxis.set_minor_locator(FixedLocator(_byte_ticks(lo / 2, hi * 2, 2)))
    ax.xaxis.set_major_formatter(fmt)
    ax.xaxis.set_minor_formatter(NullFormatter())
    # 1 B and -1 B would crowd the label 0, so the major ticks start at 1 KiB
    up = _byte_ticks(1024, ymax, 1024)
    down = [-t for t in _byte_ticks(1024, -ymin * 4, 1024)] if ymin < 0 else []
    ax.yaxis.set_major_locator(FixedLocator(sorted(down + [0.0] + up)))
    minor_up = _byte_ticks(1, ymax, 32)
    minor_down = [-t for t in _byte_ticks(1, -ymin * 4, 32)] if ymin < 0 else []
    ax.yaxis.set_minor_locator(FixedLocator(minor_down + minor_up))
    ax.yaxis.set_major_formatter(fmt)
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.axhline(0, color="#444444", lw=0.8, zorder=2)

    ax.set_xlabel("tensor size (bytes, log scale)")
    ax.set_ylabel("memory increase reported (bytes, symlog scale)")
    ax.set_title("What does a clone cost? Exact count vs RSS delta"
                 if title is None else title)
    ax.grid(True, which="major", alpha=0.3)
    # below the axes: inside, it would hide points wherever it went
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=9,
              frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig


# --------------------------------------------------------------------------
# The decision chart: do I need identity = x.clone()?  (notebooks 08 and 11)
# --------------------------------------------------------------------------

_CHART_COLOURS = {"question": "#e8eef7", "right": "#dff0d8", "silent": "#fcf0d0", "error": "#f6d6d6"}

# (name, kind, text): the questions run down the left column, each with its outcome to the right.
DECISION_CHART = (
    ("write", "question", "identity = x; then the branch runs.\nDoes anything write into x (or a view of x)\n"
                          "in place before the addition?\nx += ...   x.relu_()   nn.ReLU(inplace=True)\n"
                          "x[...] = ...   x.copy_(...)   out=x"),
    ("alias ok", "right", "identity = x is right, and free:\nnothing to fix, no clone needed\n"
                          "(the post's model, torchvision's blocks)."),
    ("leaf", "question", "Is x a leaf that requires grad?"),
    ("leaf error", "error", "RuntimeError at the write,\nclone or not.\nFix: make the write out of place."),
    ("saved", "question", "Did autograd save x before the write?\n(x came from relu, sigmoid, exp, tanh,\n"
                          "which save their output, or an op that\nran before the write saved x as its input)"),
    ("saved error", "error", "RuntimeError at backward\n(\"modified by an inplace operation\"),\n"
                             "clone or not.\nFix: make the write out of place."),
    ("silent", "silent", "x came from add, mul, conv, batch norm ...:\nno error, but identity sees the write:\n"
                         "a silently different model.\nFix: make the write out of place, or\n"
                         "identity = x.clone() (costs x.nbytes;\nx itself is still overwritten)."),
)


def decision_chart() -> Figure:
    """The rule of notebooks 08 and 11 as one flow chart, 950 px wide.

    Every outcome box names its fix; "make the write out of place" means
    ``nn.ReLU(inplace=False)``, ``F.relu(x)``, or ``x = x + y`` instead of ``x += y``.

    >>> fig = decision_chart()
    >>> sorted(t.get_text() for t in fig.axes[0].texts if t.get_text() in ("yes", "no"))
    ['no', 'no', 'no', 'yes', 'yes', 'yes']
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    text = {name: (kind, body) for name, kind, body in DECISION_CHART}
    fig, ax = plt.subplots(figsize=(9.5, 6.6))
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.95)
    ax.set(xlim=(0, 10), ylim=(0.75, 10.0))
    ax.axis("off")
    left, right, width = 2.3, 7.6, 4.35     # column centres and box width
    boxes = {}

    def box(name, x, y, height):
        kind, body = text[name]
        boxes[name] = (x, y, height)
        ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.06",
                                    fc=_CHART_COLOURS[kind], ec="#555555", lw=1.1))
        ax.text(x, y, body, ha="center", va="center", fontsize=9.5, linespacing=1.3)

    def arrow(a, b, label):
        (xa, ya, ha), (xb, yb, hb) = boxes[a], boxes[b]
        if ya == yb:                         # across, label above the arrow
            start, end = (xa + width / 2 + 0.06, ya), (xb - width / 2 - 0.06, yb)
            spot = dict(xy=((start[0] + end[0]) / 2, ya + 0.08), ha="center", va="bottom")
        else:                                # down, label beside it
            start, end = (xa, ya - ha / 2 - 0.06), (xb, yb + hb / 2 + 0.06)
            spot = dict(xy=(xa + 0.12, (start[1] + end[1]) / 2), ha="left", va="center")
        ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle="-|>", lw=1.3, color="#333333",
                                                              shrinkA=0, shrinkB=0))
        ax.annotate(label, fontsize=10, fontweight="bold", **spot)

    box("write", left, 9.05, 1.6)
    box("alias ok", right, 9.05, 1.0)
    box("leaf", left, 7.0, 0.6)
    box("leaf error", right, 7.0, 1.0)
    box("saved", left, 4.95, 1.45)
    box("saved error", right, 4.95, 1.2)
    box("silent", left, 1.85, 1.85)
    for a, b, label in [("write", "alias ok", "no"), ("write", "leaf", "yes"), ("leaf", "leaf error", "yes"),
                        ("leaf", "saved", "no"), ("saved", "saved error", "yes"), ("saved", "silent", "no")]:
        arrow(a, b, label)
    ax.set_title("Do I need identity = x.clone()?", fontsize=13, fontweight="bold")
    plt.close(fig)                           # shown once, as the value of the cell
    return fig


# --------------------------------------------------------------------------
# A memory timeline: bytes live over one measured block (notebook 09)
# --------------------------------------------------------------------------


def memory_timeline(report: Any, mark: str = "aten::clone") -> tuple[list[int], list[tuple[int, int]]]:
    """From a CPU :class:`~clonelab.memory.MemoryReport`: bytes live after each event, and the lifetimes
    ``(first event, last event)`` of the allocations whose root op is ``mark`` (a lifetime that reaches
    the end of the list was still alive when the block ended).

    >>> import torch
    >>> from clonelab import measure
    >>> x = torch.ones(100)
    >>> with measure() as m:
    ...     c = x.clone(); y = c + c; del c
    >>> memory_timeline(m)
    ([400, 800, 400], [(0, 1)])
    """
    trace = getattr(report, "trace", None)
    if not isinstance(trace, list) or getattr(report, "device", "cpu") != "cpu":
        raise TypeError(f"report must be what `with measure() as report` gives on the CPU, got {type(report).__name__}")
    if not isinstance(mark, str):
        raise TypeError(f"mark must be an op name such as 'aten::clone', got {mark!r}")
    live, current, opened, spans = [], 0, {}, []
    for i, (_, root, ptr, nbytes) in enumerate(trace):
        current += nbytes
        live.append(current)
        if nbytes > 0 and root == mark:
            opened[ptr] = i
        elif nbytes < 0 and ptr in opened:
            spans.append((opened.pop(ptr), i - 1))
    spans += [(start, len(trace) - 1) for start in opened.values()]
    return live, sorted(spans)


def plot_memory_timeline(reports: Mapping[str, Any], *, mark: str = "aten::clone",
                         title: str | None = None) -> Figure:
    """Bytes live over each measured block, one line per report, and below them the lifetime of every
    allocation made by ``mark`` (the clones) in each report. The x axis counts allocation events; a
    dotted line marks where backward starts. 950 px wide.

    >>> import torch
    >>> from clonelab import measure
    >>> x = torch.ones(100, requires_grad=True)
    >>> with measure() as m:
    ...     (x.clone() * 2).sum().backward()
    >>> fig = plot_memory_timeline({"clone": m})
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['bytes live (MiB)', 'clones']
    """
    if not isinstance(reports, Mapping) or not reports:
        raise TypeError("reports must be a non-empty dict of name -> report from `with measure() as report`")
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
        backward = next((i for i, e in enumerate(reports[name].trace)
                         if (e[1] or "").startswith("autograd::engine")), None)
        if backward is not None:
            top.axvline(backward, color=colour, ls=":", lw=1)
            if k == 0:
                top.annotate("backward starts", (backward, 0), xytext=(3, 3), textcoords="offset points",
                             fontsize=8)
        for j, (start, end) in enumerate(spans):      # one thin bar per allocation, stacked in its row
            y = k - 0.35 + 0.7 * (j + 0.5) / len(spans)
            bottom.plot([start, end + 1], [y, y], color=colour, lw=max(1.0, 6 / len(spans) ** 0.5),
                        solid_capstyle="butt")
    top.set_ylabel("bytes live (MiB)")
    top.legend(loc="upper left", fontsize=9)
    top.grid(alpha=0.3)
    bottom.set_ylabel("clones" if mark == "aten::clone" else mark)
    bottom.set_yticks(range(len(timelines)), list(timelines))
    bottom.set_ylim(-0.7, len(timelines) - 0.3)
    bottom.set_xlabel("allocation and free events, in order")
    bottom.grid(alpha=0.3, axis="x")
    fig.suptitle(title or "Bytes live during the block; bars: how long each clone lives", fontsize=11)
    fig.tight_layout()
    plt.close(fig)
    return fig


# --------------------------------------------------------------------------
# The version counter over a sequence of writes (notebook 04)
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class VersionSnapshot:
    """The ``_version`` and values of some named tensors at one moment, under a label."""

    label: str
    rows: tuple[tuple[str, int, tuple[float, ...]], ...]   # (name, version, values)


def version_snapshot(tensors: Mapping[str, torch.Tensor], label: str) -> VersionSnapshot:
    """Record ``t._version`` and the values (up to 6) of each named tensor, after the step ``label``.

    >>> x = torch.zeros(2); y = x
    >>> x += 1
    >>> version_snapshot({"x": x, "y = x": y}, "x += 1").rows
    (('x', 1, (1.0, 1.0)), ('y = x', 1, (1.0, 1.0)))
    """
    if not isinstance(tensors, Mapping) or not tensors:
        raise TypeError("tensors must be a non-empty dict of name -> tensor")
    if not isinstance(label, str):
        raise TypeError(f"label must be a string (the step just run), got {label!r}")
    rows = []
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"tensors[{name!r}] must be a tensor, got {type(t).__name__}")
        values = tuple(float(v) for v in t.detach().reshape(-1)[:6].tolist())
        rows.append((str(name), t._version, values))
    return VersionSnapshot(label, tuple(rows))


def plot_versions(snapshots: Sequence[VersionSnapshot], *, title: str | None = None) -> Figure:
    """A grid: one row per tensor, one column per step. Each cell shows the tensor's ``_version`` and
    values; a cell is coloured when the version went up in that step, so you see which names saw the write.

    >>> x = torch.zeros(2); y = x; c = x.clone()
    >>> shots = [version_snapshot({"x": x, "y": y, "c": c}, "start")]
    >>> x += 1
    >>> shots.append(version_snapshot({"x": x, "y": y, "c": c}, "x += 1"))
    >>> fig = plot_versions(shots)
    >>> len(fig.axes[0].patches)
    6
    """
    if (not isinstance(snapshots, Sequence) or not snapshots
            or not all(isinstance(s, VersionSnapshot) for s in snapshots)):
        raise TypeError("snapshots must be a non-empty list of version_snapshot(...) results")
    names = [name for name, _, _ in snapshots[0].rows]
    if any([name for name, _, _ in s.rows] != names for s in snapshots):
        raise ValueError("every snapshot must name the same tensors, in the same order")
    require_optional_str(title, "title")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    cols, rows = len(snapshots), len(names)
    width = min(9.5, 1.9 + 1.6 * cols)
    fig, ax = plt.subplots(figsize=(width, 0.75 + 0.62 * rows))
    ax.set(xlim=(-1.9 / 1.6, cols), ylim=(rows, -0.6))
    ax.axis("off")
    for c, shot in enumerate(snapshots):
        ax.text(c + 0.5, -0.3, shot.label, ha="center", va="center", fontsize=9, family="monospace",
                fontweight="bold")
        for r, (name, version, values) in enumerate(shot.rows):
            moved = c > 0 and version > snapshots[c - 1].rows[r][1]      # a write, seen through this name
            ax.add_patch(Rectangle((c + 0.04, r + 0.06), 0.92, 0.88, fc="#fcd9a8" if moved else "#f2f2f2",
                                   ec="#999999", lw=0.8))
            shown = " ".join(f"{v:g}" for v in values)
            ax.text(c + 0.5, r + 0.5, f"v{version}\n{shown}", ha="center", va="center", fontsize=8.5,
                    family="monospace", linespacing=1.3)
    for r, name in enumerate(names):
        ax.text(-0.08, r + 0.5, name, ha="right", va="center", fontsize=9, family="monospace")
    ax.set_title(title or "x._version and values after each step (orange: the version moved)", fontsize=10)
    fig.tight_layout()
    plt.close(fig)
    return fig
