"""Without Graphviz's ``dot``: is it there, how to install it, and a matplotlib drawing instead (notebook 06)."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from clonelab._autograd import FREED, MODIFIED, backward_nodes, saved_tensors

_HINTS = {
    "colab": "Graphviz comes preinstalled on Colab; if `dot` is missing, run `!apt-get install -y graphviz` in a cell.",
    "conda": "Install Graphviz: `conda install -c conda-forge graphviz`, then restart the kernel.",
    "debian": "Install Graphviz: `sudo apt-get install graphviz`, then restart the kernel.",
    "linux": "Install Graphviz with your distribution's package manager (e.g. `sudo dnf install graphviz`), "
             "then restart the kernel.",
    "macos": "Install Graphviz: `brew install graphviz`, then restart the kernel.",
    "windows": "Install Graphviz: `winget install graphviz` (or `choco install graphviz`), make sure its bin "
               "folder is on PATH, then restart the kernel.",
}
UNREADABLE = {FREED: "backward() has already freed them. Draw the graph before calling backward(), or call "
                     "backward(retain_graph=True).",
              MODIFIED: "an in-place write has changed one since it was saved, so backward() would raise. Draw the "
                        "graph before the write."}


def unreadable(reason: str) -> str:
    """The error for ``show_saved=True`` when a saved tensor cannot be read back, for ``reason`` FREED or MODIFIED."""
    return "show_saved=True (or show_attrs=True) needs the tensors saved for backward, but " + UNREADABLE[reason]
# torchviz's colours, so that both drawings read alike; sizes in inches, for a 9 pt monospace font
KINDS = {"function": ("lightgray", "backward function"), "leaf": ("lightblue", "leaf tensor (gets .grad)"),
         "saved": ("orange", "saved for backward"), "output": ("#caff70", "output tensor")}
CHAR, LINE, GAP_X, GAP_Y = 0.6 * 9 / 72, 1.3 * 9 / 72, 0.22, 0.32


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on PATH (it comes from the operating system or conda, not pip).

    >>> isinstance(dot_available(), bool)
    True
    """
    return shutil.which("dot") is not None


def install_hint(platform: str | None = None) -> str:
    """One line that tells how to install ``dot`` on this system, or on ``platform`` (a key of ``_HINTS``).

    >>> install_hint("macos")
    'Install Graphviz: `brew install graphviz`, then restart the kernel.'
    """
    if platform is None:  # Colab runs Debian and conda runs anywhere, but their own installers are the advice
        colab = "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ
        platform = ("colab" if colab else "conda" if os.path.isdir(os.path.join(sys.prefix, "conda-meta"))
                    else "macos" if sys.platform == "darwin" else "windows" if sys.platform in ("win32", "cygwin")
                    else "debian" if os.path.exists("/etc/debian_version") else "linux")  # Ubuntu has it too
    return _HINTS[platform]


def boxes_and_edges(output: Any, params: dict, show_saved: bool) -> tuple[dict, list, list]:
    """Boxes ``{id: (label, kind)}``, edges ``(from id, to id, style)``, and the objects those ids belong to."""
    names = {id(t): name for name, t in params.items()}
    fns, boxes = backward_nodes(output), {}
    edges, keep = [(id(fns[0]), id(output), "arrow")], [output, fns]  # kept alive, so that no id is reused

    def tensor(t: Any, kind: str, name: str = "") -> int:
        if id(t) not in boxes or kind == "leaf":  # a leaf that is also saved is drawn as the leaf
            shape = "(" + ", ".join(map(str, t.shape)) + ")"
            name = name or names.get(id(t), "")
            boxes[id(t)] = (f"{name}\n{shape}" if name else shape, kind)
            keep.append(t)
        return id(t)

    tensor(output, "output")
    for fn in fns:
        boxes[id(fn)] = (type(fn).__name__, "function")
        if hasattr(fn, "variable"):  # AccumulateGrad: the leaf whose .grad it fills
            edges.append((tensor(fn.variable, "leaf"), id(fn), "arrow"))
        edges += [(id(f), id(fn), "arrow") for f, _ in fn.next_functions if f is not None]
        for name, t in saved_tensors(fn) if show_saved else ():
            if isinstance(t, str):
                raise ValueError(unreadable(t))
            edges.append((id(fn), tensor(t, "saved", name), "saved"))
    return boxes, list(dict.fromkeys(edges)), keep


def placement(boxes: dict, edges: list) -> tuple[dict, dict, float, float, float]:
    """Box centres and sizes, the height of a layer, and the total width and height (inches at full size)."""
    size = {k: (max(map(len, label.split("\n"))) * CHAR + 0.16, (label.count("\n") + 1) * LINE + 0.12)
            for k, (label, _) in boxes.items()}
    depth, changed = dict.fromkeys(boxes, 0), True
    while changed:  # layer = the longest path down to the output, so that every arrow points down
        changed = False
        for a, b, style in edges:
            if style == "arrow" and depth[a] <= depth[b]:
                depth[a], changed = depth[b] + 1, True
    for t in {b for _, b, style in edges if style == "saved" and boxes[b][1] == "saved"}:
        depth[t] = min(depth[a] for a, b, _ in edges if b == t) - 1  # just below its highest saver
    above: dict[int, list[int]] = {k: [] for k in boxes}
    for a, b, _ in edges:
        hi, lo = (a, b) if depth[a] > depth[b] else (b, a)
        above[lo].append(hi)
    row, x = max(h for _, h in size.values()) + GAP_Y, {}
    for d in range(max(depth.values()), -1, -1):  # top down: each box under its neighbours above, no overlaps
        want = {k: sum(xs) / len(xs) if (xs := [x[n] for n in above[k] if n in x]) else 0.0
                for k in boxes if depth[k] == d}
        right = float("-inf")
        for k in sorted(want, key=want.get):
            x[k] = max(want[k], right + size[k][0] / 2)
            right = x[k] + size[k][0] / 2 + GAP_X
    left, bottom = min(x[k] - size[k][0] / 2 for k in boxes), min(depth[k] * row - size[k][1] / 2 for k in boxes)
    pos = {k: (x[k] - left, depth[k] * row - bottom) for k in boxes}
    return (pos, size, row, max(px + size[k][0] / 2 for k, (px, _) in pos.items()),
            max(py + size[k][1] / 2 for k, (_, py) in pos.items()))


def crossed(ends, rad: float, a: int, b: int, pos: dict, size: dict) -> list[int]:
    """The boxes but ``a``, ``b`` that the ``arc3`` curve ``ends[0]`` -> ``ends[1]``, bent by ``rad``, runs through."""
    (x1, y1), (x2, y2) = ends
    cx, cy = (x1 + x2) / 2 + rad * (y2 - y1), (y1 + y2) / 2 - rad * (x2 - x1)
    points = [((1 - t) ** 2 * x1 + 2 * t * (1 - t) * cx + t * t * x2, (1 - t) ** 2 * y1 + 2 * t * (1 - t) * cy + t * t * y2)
              for t in (i / 40 for i in range(1, 40))]
    return [k for k, (x, y) in pos.items() if k not in (a, b)
            and any(abs(px - x) <= size[k][0] / 2 and abs(py - y) <= size[k][1] / 2 for px, py in points)]


def route(a: int, b: int, pos: dict, size: dict, row: float) -> tuple[tuple, float]:
    """The edge from the upper of boxes ``a``, ``b`` to the lower: straight, or bent clear of boxes if it skips rows."""
    hi, lo = (a, b) if pos[a][1] > pos[b][1] else (b, a)
    ends = (pos[hi][0], pos[hi][1] - size[hi][1] / 2), (pos[lo][0], pos[lo][1] + size[lo][1] / 2)
    bends = (0.2, -0.2, 0.35, -0.35, 0.5, -0.5, 0.7, -0.7, 1.0, -1.0)
    skips = pos[hi][1] - pos[lo][1] > 1.5 * row
    return ends, next((r for r in bends if not crossed(ends, r, a, b, pos, size)), 0.2) if skips else 0.0


def figure(panels: list[tuple[Any, dict, bool, str]], ax: Any = None) -> Any:
    """Draw each ``(output, params, show_saved, title)`` into ``ax``, or side by side into a new figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
    graphs = [boxes_and_edges(output, params, show_saved) for output, params, show_saved, _ in panels]
    laid = [placement(boxes, edges) for boxes, edges, _ in graphs]
    if ax is None:
        fig_w = min(max(sum(w + 0.6 for *_, w, _ in laid), 4.5 * len(laid)), 10.0)
        fig_h = min(max(max(h for *_, h in laid) + 1.3, 2.5), 14.5)
        fig, axes = plt.subplots(1, len(panels), figsize=(fig_w, fig_h), squeeze=False)
        fig.subplots_adjust(left=0.02, right=0.98, top=1 - 0.45 / fig_h, bottom=0.75 / fig_h, wspace=0.08)
        plt.close(fig)  # the returned Figure displays once, as the cell's value
    axes = [ax] if ax is not None else list(axes[0])
    # one scale for all panels, that fits each in its axes (never above full size); text shrinks with it
    s = min(min(1.0, a.get_position().width * a.figure.get_figwidth() / (w + 0.2),
                a.get_position().height * a.figure.get_figheight() / (h + 0.2)) for a, (*_, w, h) in zip(axes, laid))
    for ax, (boxes, edges, _), (pos, size, row, width, height), (*_, title) in zip(axes, graphs, laid, panels):
        for a, b, style in edges:  # from the bottom of the upper box to the top of the lower one
            (start, end), rad = route(a, b, pos, size, row)
            ax.add_patch(FancyArrowPatch(
                start, end, arrowstyle="-|>" if style == "arrow" else "-", mutation_scale=9 * s, lw=s, zorder=1,
                color="#444444" if style == "arrow" else "#b36b00", connectionstyle=f"arc3,rad={rad}"))
        for k, (label, kind) in boxes.items():
            (x, y), (w, h) = pos[k], size[k]
            ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.04",
                                        facecolor=KINDS[kind][0], edgecolor="#333333", lw=0.8 * s, zorder=2))
            ax.text(x, y, label, ha="center", va="center", family="monospace", fontsize=9 * s, zorder=3)
        ax.set(xlim=(-0.1, width + 0.1), ylim=(-0.1, height + 0.1), aspect="equal")
        ax.set_axis_off()
        ax.set_title(title, fontsize=11, fontweight="bold")
        kinds = [k for k in KINDS if any(kind == k for _, kind in boxes.values())]
        ax.legend(handles=[Patch(facecolor=KINDS[k][0], edgecolor="#333333", label=KINDS[k][1]) for k in kinds],
                  loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=7.5, frameon=False)
    return axes[0].figure
