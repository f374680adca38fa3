"""The layout behind ``clonelab.draw_fallback``: where each box and edge of a graph goes.

Kept apart from ``graphs.py`` so that the drawing API there stays short to read.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for type hints
    from matplotlib.axes import Axes

    from clonelab.graphs import _Graph


# --------------------------------------------------------------------------
# The matplotlib fallback: a small layered ("Sugiyama") layout. Layers by
# longest distance from the output, extra invisible points on edges that skip
# layers (the residual edge does), barycenter ordering to reduce crossings,
# then x positions pulled toward neighbours under a minimum spacing.
# --------------------------------------------------------------------------

_FONT_PT = 9.0  # node label size when the drawing fits at full size
_CHAR_IN = 0.6 * _FONT_PT / 72  # DejaVu Sans Mono advance is 0.6 em
_LINE_IN = 1.3 * _FONT_PT / 72
_PAD_X, _PAD_Y = 0.08, 0.06
_GAP_X, _GAP_Y = 0.22, 0.32
_DUMMY_W = 0.06

# torchviz's colours, so the fallback reads the same way
_COLORS = {
    "function": "lightgray",
    "leaf": "lightblue",
    "saved": "orange",
    "output": "#caff70",  # Graphviz's darkolivegreen1
    "base": "#a2cd5a",  # darkolivegreen3
}
_LEGEND = {
    "function": "backward function",
    "leaf": "leaf tensor (gets .grad)",
    "saved": "saved for backward",
    "output": "output tensor",
    "base": "base of the output view",
}


@dataclasses.dataclass
class _Layout:
    graph: _Graph
    pos: dict[int, tuple[float, float]]  # centres, in inches at _FONT_PT; dummies too
    size: dict[int, tuple[float, float]]  # (width, height) of the real nodes
    routes: list[tuple[list[tuple[float, float]], str]]  # points of each edge, and its style
    width: float
    height: float


def _isotonic(targets: list[float], weights: list[float]) -> list[float]:
    # Pool-adjacent-violators: the nondecreasing sequence closest (weighted
    # least squares) to targets. Used to place a layer's nodes as near their
    # wanted x as the minimum spacing allows.
    blocks: list[list[float]] = []  # [mean, weight, count]
    for t, w in zip(targets, weights):
        blocks.append([t, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, n2 = blocks.pop()
            m1, w1, n1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    out: list[float] = []
    for mean, _, count in blocks:
        out += [mean] * int(count)
    return out


def _crossings(upper: list[int], lower: list[int], down: dict[int, list[int]]) -> int:
    where = {k: i for i, k in enumerate(lower)}
    ends = [i for u in upper for i in sorted(where[v] for v in down.get(u, ()) if v in where)]
    return sum(1 for i in range(len(ends)) for j in range(i + 1, len(ends)) if ends[j] < ends[i])


def _layout(graph: _Graph) -> _Layout:
    order_found = {key: i for i, key in enumerate(graph.nodes)}
    succ: dict[int, list[int]] = collections.defaultdict(list)
    for src, dst, style in graph.edges:
        if style != "saved":
            succ[src].append(dst)

    # 1. layers: depth = longest path to a sink, so every edge points down
    depth: dict[int, int] = {}
    for root in graph.nodes:
        stack = [(root, False)]
        while stack:
            key, expanded = stack.pop()
            if key in depth:
                continue
            if expanded:
                depth[key] = 1 + max((depth[v] for v in succ[key]), default=-1)
            else:
                stack.append((key, True))
                stack += [(v, False) for v in succ[key] if v not in depth]
    # A tensor that is only saved sits one layer below the lowest node that
    # saved it (custom Functions' saved tensors: one above), as dot puts it.
    savers: dict[int, list[int]] = collections.defaultdict(list)
    users: dict[int, list[int]] = collections.defaultdict(list)
    for src, dst, style in graph.edges:
        if style == "saved":
            if graph.nodes[dst].kind == "saved" and not succ[dst]:
                savers[dst].append(src)
            elif graph.nodes[src].kind == "saved" and not succ[src]:
                users[src].append(dst)
    for key, fns in savers.items():
        depth[key] = max(min(depth[f] for f in fns) - 1, 0)
    for key, fns in users.items():
        depth[key] = max(depth[f] for f in fns) + 1

    # 2. chains of dummy points for edges that skip layers
    next_dummy = -1
    chains: list[list[int]] = []
    down: dict[int, list[int]] = collections.defaultdict(list)
    up: dict[int, list[int]] = collections.defaultdict(list)
    for src, dst, style in graph.edges:
        hi, lo = (src, dst) if depth[src] >= depth[dst] else (dst, src)
        chain = [hi]
        for d in range(depth[hi] - 1, depth[lo], -1):
            depth[next_dummy] = d
            order_found[next_dummy] = order_found[src]
            chain.append(next_dummy)
            next_dummy -= 1
        chain.append(lo)
        chains.append(chain)
        for a, b in zip(chain, chain[1:]):
            if depth[a] == depth[b] + 1:
                down[a].append(b)
                up[b].append(a)

    top = max(depth.values())
    layers: list[list[int]] = [[] for _ in range(top + 1)]
    for key in sorted(depth, key=order_found.__getitem__):
        layers[depth[key]].append(key)

    # 3. order each layer by the mean position of its neighbours, sweeping
    # down and up; keep the ordering with the fewest crossings
    def total_crossings(ls: list[list[int]]) -> int:
        return sum(_crossings(ls[d + 1], ls[d], down) for d in range(top))

    best = [list(layer) for layer in layers]
    best_count = total_crossings(best)
    for sweep in range(12):
        going_down = sweep % 2 == 0
        span = range(top - 1, -1, -1) if going_down else range(1, top + 1)
        for d in span:
            ref = layers[d + 1] if going_down else layers[d - 1]
            where = {k: i for i, k in enumerate(ref)}
            nbrs = up if going_down else down
            def bary(item: tuple[int, int]) -> float:
                i, key = item
                ps = [where[n] for n in nbrs.get(key, ()) if n in where]
                return sum(ps) / len(ps) if ps else i * len(ref) / max(len(layers[d]), 1)
            layers[d] = [k for _, k in sorted(enumerate(layers[d]), key=bary)]
        count = total_crossings(layers)
        if count < best_count:
            best, best_count = [list(layer) for layer in layers], count
    layers = best

    # 4. sizes, then x positions
    size: dict[int, tuple[float, float]] = {}
    for key, node in graph.nodes.items():
        lines = node.label.split("\n")
        size[key] = (
            max(len(line) for line in lines) * _CHAR_IN + 2 * _PAD_X,
            len(lines) * _LINE_IN + 2 * _PAD_Y,
        )
    width_of = lambda k: size[k][0] if k in size else _DUMMY_W  # noqa: E731

    x: dict[int, float] = {}
    for layer in layers:
        cursor = 0.0
        for key in layer:
            x[key] = cursor + width_of(key) / 2
            cursor += width_of(key) + _GAP_X
    for it in range(24):
        for d in (range(top, -1, -1) if it % 2 == 0 else range(top + 1)):
            layer = layers[d]
            if not layer:
                continue
            targets, weights = [], []
            for key in layer:
                ps = [x[n] for n in up.get(key, []) + down.get(key, [])]
                targets.append(sum(ps) / len(ps) if ps else x[key])
                # dummies pull harder, so long edges come out straight
                weights.append(4.0 if key < 0 else 1.0)
            offsets = [0.0]
            for a, b in zip(layer, layer[1:]):
                offsets.append(offsets[-1] + (width_of(a) + width_of(b)) / 2 + _GAP_X)
            ys = _isotonic([t - o for t, o in zip(targets, offsets)], weights)
            for key, y, o in zip(layer, ys, offsets):
                x[key] = y + o
    left = min(x[k] - width_of(k) / 2 for k in x)
    right = max(x[k] + width_of(k) / 2 for k in x)

    tallest = max(h for _, h in size.values())
    row = tallest + _GAP_Y
    pos = {k: (x[k] - left, depth[k] * row + tallest / 2) for k in x}

    # 5. edge routes: from the bottom of the upper end to the top of the lower
    routes = []
    for (src, dst, style), chain in zip(graph.edges, chains):
        points = []
        for i, key in enumerate(chain):
            cx, cy = pos[key]
            if key in size and i == 0:
                cy -= size[key][1] / 2
            elif key in size:
                cy += size[key][1] / 2
            points.append((cx, cy))
        if chain[0] != src:  # arrows must still end at the consumer
            points.reverse()
        routes.append((points, style))
    height = top * row + tallest
    return _Layout(graph, pos, size, routes, right - left, height)


def _draw_layout(layout: _Layout, ax: Axes, title: str, scale: float) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
    from matplotlib.path import Path

    graph = layout.graph
    for points, style in layout.routes:
        # smooth vertical S-curves through the dummy points, as dot draws them
        verts, codes = [points[0]], [Path.MOVETO]
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            k = (y0 - y1) / 2
            verts += [(x0, y0 - k), (x1, y1 + k), (x1, y1)]
            codes += [Path.CURVE4] * 3
        if style == "saved":
            # which end is up depends on the edge; no arrowhead either way
            ax.add_patch(FancyArrowPatch(path=Path(verts, codes), arrowstyle="-",
                                         color="#b36b00", lw=0.9 * scale, zorder=1))
            continue
        ax.add_patch(FancyArrowPatch(
            path=Path(verts, codes),
            arrowstyle="-|>",
            mutation_scale=9 * scale,
            color="#444444",
            lw=1.0 * scale,
            linestyle=":" if style == "view" else "-",
            zorder=1,
        ))
    for key, node in graph.nodes.items():
        cx, cy = layout.pos[key]
        w, h = layout.size[key]
        ax.add_patch(FancyBboxPatch(
            (cx - w / 2, cy - h / 2), w, h,
            boxstyle="round,pad=0,rounding_size=0.04",
            facecolor=_COLORS[node.kind], edgecolor="#333333", lw=0.8 * scale, zorder=2,
        ))
        ax.text(cx, cy, node.label, ha="center", va="center", family="monospace",
                fontsize=_FONT_PT * scale, linespacing=1.15, zorder=3)
    margin = 0.1
    ax.set_xlim(-margin, layout.width + margin)
    ax.set_ylim(-margin, layout.height + margin)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(title, fontsize=11, pad=6, fontweight="bold")
    kinds = [k for k in _COLORS if any(n.kind == k for n in graph.nodes.values())]
    handles = [Patch(facecolor=_COLORS[k], edgecolor="#333333", label=_LEGEND[k]) for k in kinds]
    if any(style == "view" for _, style in layout.routes):
        handles.append(Line2D([], [], color="#444444", ls=":", label="view of"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0),
              ncol=min(len(handles), 3), fontsize=7.5, frameon=False,
              handlelength=1.2, columnspacing=1.0)


def _axes_size_in(ax: Axes) -> tuple[float, float]:
    fig_w, fig_h = ax.figure.get_size_inches()
    box = ax.get_position()
    return box.width * fig_w, box.height * fig_h


def _fit_scale(layouts: Sequence[_Layout], box_w: float, box_h: float) -> float:
    # Text is sized in points, not data units, so shrink fonts and lines by
    # the same factor as the drawing; never enlarge past full size.
    s = min(min(box_w / (lay.width + 0.2), box_h / (lay.height + 0.2)) for lay in layouts)
    return min(1.0, max(s, 0.05))
