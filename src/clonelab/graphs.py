"""Draw autograd graphs, with torchviz when Graphviz is installed and matplotlib when not.

``draw_graph`` is the one call a notebook needs. It asks torchviz for the
graph and renders it with Graphviz's ``dot`` program. Without ``dot`` (a
plain ``pip install`` does not provide it), it prints a one-line install hint
and draws the same nodes with matplotlib, so the cell still shows a picture
and never fails.

>>> import torch
>>> w = torch.tensor([2.0], requires_grad=True)
>>> graph_nodes((w * 3).sum())
Counter({'SumBackward0': 1, 'MulBackward0': 1, 'AccumulateGrad': 1})
"""

from __future__ import annotations

import collections
import dataclasses
import io
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch

from clonelab._layout import _axes_size_in, _draw_layout, _fit_scale, _layout
from clonelab._checks import require_bool, require_optional_str

if TYPE_CHECKING:  # only for type hints: these imports are heavy or optional
    import graphviz
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "GraphDrawing",
    "SideBySide",
    "dot_available",
    "draw_fallback",
    "draw_graph",
    "graph_nodes",
    "install_hint",
    "side_by_side",
]

# --------------------------------------------------------------------------
# Is Graphviz there, and how does one get it?
# --------------------------------------------------------------------------

_HINTS = {
    "colab": "Graphviz comes preinstalled on Colab; if `dot` is missing, run "
    "`!apt-get install -y graphviz` in a cell.",
    "conda": "Install Graphviz: `conda install -c conda-forge graphviz`, then restart the kernel.",
    "debian": "Install Graphviz: `sudo apt-get install graphviz`, then restart the kernel.",
    "linux": "Install Graphviz with your distribution's package manager "
    "(e.g. `sudo dnf install graphviz`), then restart the kernel.",
    "macos": "Install Graphviz: `brew install graphviz`, then restart the kernel.",
    "windows": "Install Graphviz: `winget install graphviz` (or `choco install graphviz`), "
    "make sure its bin folder is on PATH, then restart the kernel.",
}


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on PATH.

    torchviz only builds a description of the graph; turning it into a
    picture needs ``dot``, which comes from the operating system, not pip.

    >>> isinstance(dot_available(), bool)
    True
    """
    return shutil.which("dot") is not None


def _detect_platform() -> str:
    # Order matters: Colab is a Debian machine and a conda env can live on
    # any OS, but in both cases their own installer is the right advice.
    if "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ:
        return "colab"
    if os.path.isdir(os.path.join(sys.prefix, "conda-meta")):
        return "conda"
    if sys.platform == "darwin":
        return "macos"
    if sys.platform in ("win32", "cygwin"):
        return "windows"
    if sys.platform.startswith("linux"):
        if os.path.exists("/etc/debian_version"):
            return "debian"
        try:
            with open("/etc/os-release", encoding="utf-8") as f:
                release = f.read().lower()
        except OSError:
            release = ""
        if "debian" in release or "ubuntu" in release:
            return "debian"
    return "linux"


def install_hint(platform: str | None = None) -> str:
    """One line that tells how to install Graphviz's ``dot`` here.

    ``platform`` picks the hint for another system instead of this one:
    one of ``"colab"``, ``"conda"``, ``"debian"``, ``"linux"``,
    ``"macos"``, ``"windows"``.

    >>> install_hint("macos")
    'Install Graphviz: `brew install graphviz`, then restart the kernel.'
    """
    if platform is None:
        return _HINTS[_detect_platform()]
    if not isinstance(platform, str):
        raise TypeError(
            f"platform must be None or a str, one of {sorted(_HINTS)}; got {type(platform).__name__}"
        )
    if platform not in _HINTS:
        raise ValueError(f"platform must be one of {sorted(_HINTS)}; got {platform!r}")
    return _HINTS[platform]


# --------------------------------------------------------------------------
# Argument checks, shared by the public functions
# --------------------------------------------------------------------------


def _check_output(output: Any, argname: str = "output") -> None:
    if not isinstance(output, torch.Tensor):
        raise TypeError(
            f"{argname} must be a torch.Tensor produced by autograd-tracked ops "
            f"(e.g. a loss); got {type(output).__name__}"
        )
    if output.grad_fn is None:
        if output.requires_grad:
            why = "it is a leaf tensor (you created it; no op made it)"
        else:
            why = (
                "it does not require grad: it was made under torch.no_grad() / "
                "torch.inference_mode(), or from tensors without requires_grad=True"
            )
        raise ValueError(f"{argname} has no grad_fn, so there is no graph to draw: {why}")


def _check_params(params: Any) -> dict[str, torch.Tensor]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise TypeError(
            "params must be None or a dict of name -> tensor, e.g. {'weight1': w1} "
            f"or dict(model.named_parameters()); got {type(params).__name__}"
        )
    for name, value in params.items():
        if not isinstance(name, str):
            raise TypeError(f"params keys must be str names; got {name!r}")
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"params[{name!r}] must be a torch.Tensor; got {type(value).__name__}"
            )
    return dict(params)


def _check_ax(ax: Any) -> None:
    from matplotlib.axes import Axes

    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(f"ax must be None or a matplotlib Axes; got {type(ax).__name__}")


# --------------------------------------------------------------------------
# The graph walk. graph_nodes, draw_fallback and the tests all use this one
# walk, and it visits the nodes that torchviz.make_dot draws.
# --------------------------------------------------------------------------


@dataclasses.dataclass
class _Node:
    key: int  # id() of the grad_fn or tensor; the object is kept alive in _Graph.keep
    label: str
    kind: str  # "function", "leaf", "saved", "output" or "base" (the base of a view output)
    name: str  # the class name for functions, "" for tensors


@dataclasses.dataclass
class _Graph:
    nodes: dict[int, _Node]
    # (source, target, style). Like torchviz, "arrow" and "view" edges point
    # from an input toward the node that consumes it (toward the output);
    # "saved" edges join a backward node to a tensor it saved, with no arrow.
    edges: list[tuple[int, int, str]]
    # id() is only unique while the object lives, and next_functions hands
    # out wrappers that could be freed and their ids reused mid-walk.
    keep: list[Any]


def _shape(t: torch.Tensor) -> str:
    # torchviz's own shape notation, so both pictures label tensors alike
    return "(" + ", ".join(str(n) for n in t.shape) + ")"


def _walk(
    output: torch.Tensor, params: Mapping[str, torch.Tensor], show_saved: bool = False
) -> _Graph:
    names = {id(t): name for name, t in params.items()}
    graph = _Graph(nodes={}, edges=[], keep=[])

    def add_tensor(t: torch.Tensor, kind: str, name: str = "") -> int:
        key = id(t)
        # A tensor can be both saved and a leaf (w2 in w2 * f): one node, and
        # it is drawn as the leaf, as torchviz does.
        if key not in graph.nodes or (kind == "leaf" and graph.nodes[key].kind == "saved"):
            name = names.get(key, "" if kind == "leaf" else name)
            label = f"{name}\n{_shape(t)}" if name else _shape(t)
            graph.nodes[key] = _Node(key, label, kind, "")
            graph.keep.append(t)
        return key

    def saved_tensors(fn: Any) -> list[tuple[str, torch.Tensor]]:
        # Backward nodes expose what they saved as _saved_<name> attributes.
        found = []
        for attr in dir(fn):
            if not attr.startswith("_saved_"):
                continue
            try:
                value = getattr(fn, attr)
            except RuntimeError as exc:
                raise ValueError(
                    "show_saved=True needs the tensors saved for backward, but backward() "
                    "has already freed them. Draw the graph before calling backward(), or "
                    "call backward(retain_graph=True)."
                ) from exc
            label = attr[len("_saved_"):]
            if isinstance(value, torch.Tensor):
                found.append((label, value))
            elif isinstance(value, tuple):
                found += [(f"{label}[{i}]", v) for i, v in enumerate(value)
                          if isinstance(v, torch.Tensor)]
        return found

    seen: set[int] = set()
    # Depth-first from the output, in the order torchviz visits nodes; an
    # explicit stack so that deep graphs (a whole ResNet) do not hit
    # Python's recursion limit.
    stack: list[Any] = []

    def push_root(t: torch.Tensor, kind: str) -> None:
        key = add_tensor(t, kind)
        if t.grad_fn is not None:
            graph.edges.append((id(t.grad_fn), key, "arrow"))
            graph.keep.append(t.grad_fn)
            stack.append(t.grad_fn)
            visit_all()
        if t._is_view() and t._base is not None and id(t._base) not in graph.nodes:
            push_root(t._base, "base")
            graph.edges.append((id(t._base), key, "view"))

    def visit_all() -> None:
        while stack:
            fn = stack.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            graph.keep.append(fn)
            graph.nodes[id(fn)] = _Node(id(fn), type(fn).__name__, "function", type(fn).__name__)
            if show_saved:
                for label, t in saved_tensors(fn):
                    graph.edges.append((id(fn), add_tensor(t, "saved", label), "saved"))
            variable = getattr(fn, "variable", None)  # AccumulateGrad: the leaf it fills
            if isinstance(variable, torch.Tensor):
                graph.edges.append((add_tensor(variable, "leaf"), id(fn), "arrow"))
            children = [u for u, _ in getattr(fn, "next_functions", ()) if u is not None]
            for u in children:
                graph.keep.append(u)
                graph.edges.append((id(u), id(fn), "arrow"))
            stack.extend(reversed(children))  # reversed: visit the first input first
            # custom autograd.Function nodes keep their saved tensors here;
            # torchviz always shows them
            for t in getattr(fn, "saved_tensors", None) or ():
                if isinstance(t, torch.Tensor):
                    graph.edges.append((add_tensor(t, "saved"), id(fn), "saved"))

    push_root(output, "output")
    # the same edge can be found twice (an op that uses one input twice)
    graph.edges = list(dict.fromkeys(graph.edges))
    return graph


def graph_nodes(output: torch.Tensor) -> collections.Counter[str]:
    """Count the backward nodes reachable from ``output.grad_fn``, by class name.

    Leaves that require grad appear as ``AccumulateGrad`` nodes. This is the
    node set that torchviz draws, without the tensor boxes.

    >>> import torch
    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> alias = graph_nodes((w * 1) ** 2)
    >>> clone = graph_nodes((w * 1).clone() ** 2)
    >>> clone - alias
    Counter({'CloneBackward0': 1})
    """
    _check_output(output)
    graph = _walk(output, {})
    return collections.Counter(
        node.name for node in graph.nodes.values() if node.kind == "function"
    )


# The matplotlib fallback's layout (layers, crossing reduction, positions) is in _layout.py.


def draw_fallback(
    output: torch.Tensor,
    params: Mapping[str, torch.Tensor] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    show_saved: bool = False,
) -> Figure:
    """Draw the autograd graph of ``output`` with matplotlib only (no Graphviz).

    It shows the nodes torchviz shows, in torchviz's colours: backward
    functions (grey), leaf tensors (blue, named from ``params``), the output
    (green) and, with ``show_saved=True``, tensors saved for backward
    (orange). Arrows point from inputs toward the output. Draws into ``ax``
    when given; otherwise makes a new figure.

    >>> import torch
    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> fig = draw_fallback((w * 3) ** 2, {"w": w})
    >>> fig.axes[0].get_title()
    'autograd graph (matplotlib drawing)'
    """
    _check_output(output)
    params = _check_params(params)
    _check_ax(ax)
    require_optional_str(title, "title")
    require_bool(show_saved, "show_saved")
    import matplotlib.pyplot as plt

    layout = _layout(_walk(output, params, show_saved))
    title = "autograd graph (matplotlib drawing)" if title is None else title
    if ax is not None:
        _draw_layout(layout, ax, title, _fit_scale([layout], *_axes_size_in(ax)))
        return ax.figure  # the caller's figure: leave showing it to them
    # room for the title above and the legend below
    scale = _fit_scale([layout], 9.6, 13.0)
    fig_w = min(max(layout.width * scale + 0.6, 4.5), 10.0)
    fig_h = min(max(layout.height * scale + 1.3, 2.5), 14.5)
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    fig.subplots_adjust(left=0.02, right=0.98, top=1 - 0.45 / fig_h, bottom=0.75 / fig_h)
    _draw_layout(layout, ax, title, _fit_scale([layout], *_axes_size_in(ax)))
    plt.close(fig)  # the returned Figure displays once, as the cell's value
    return fig


# --------------------------------------------------------------------------
# draw_graph and what it returns
# --------------------------------------------------------------------------

# Why every picture carries a PNG next to its SVG: JupyterLab will not show
# an SVG output from a notebook it does not trust ("Cannot display an
# untrusted SVG"), and a notebook committed executed and opened by a reader is
# untrusted. It then falls back to the PNG. Trusted views, nbconvert and Colab
# prefer the SVG.


# Why a wrapper rather than the bare graphviz.Digraph: the caller gets one
# type whether or not `dot` exists; the pictures are rendered once, here, so a
# missing or broken `dot` is caught inside draw_graph (a bare Digraph would
# raise later, while the notebook displays it); and side_by_side can redraw
# from the tensors it keeps when one of the pictures is the fallback.
@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GraphDrawing:
    """An autograd graph picture, and the tensors it was drawn from.

    With Graphviz, Jupyter shows ``svg`` (or ``png`` where SVG is not
    allowed); without it, the matplotlib ``figure``. ``digraph`` is
    torchviz's ``graphviz.Digraph`` (None only when torchviz cannot be
    imported); ``source`` is its DOT text. Keeping ``output`` keeps its
    autograd graph alive, too.

    >>> import torch
    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> g = draw_graph(w * 3)  # doctest: +SKIP
    >>> g.backend in ("graphviz", "matplotlib")  # doctest: +SKIP
    True
    """

    output: torch.Tensor
    params: dict[str, torch.Tensor]
    show_saved: bool
    show_attrs: bool
    digraph: graphviz.Digraph | None
    svg: str | None
    png: bytes | None
    figure: Figure | None

    @property
    def backend(self) -> str:
        """``"graphviz"`` when ``dot`` drew it, ``"matplotlib"`` for the fallback."""
        return "graphviz" if self.svg is not None else "matplotlib"

    @property
    def source(self) -> str | None:
        """The DOT source of the graph (None without torchviz)."""
        return None if self.digraph is None else self.digraph.source

    def boxes(self) -> list[tuple[str, str]]:
        """Every box of the drawing as ``(label, colour)``, read from the DOT text.

        Labels are on one line (``"weight1 (1)"``); a box without a fill
        colour is a backward node, reported as ``"grey"``. When the DOT text
        declares a box twice, the later attributes win, as in Graphviz.

        >>> import torch
        >>> w = torch.tensor([2.0], requires_grad=True)
        >>> draw_graph((w * 3).sum(), {"w": w}).boxes()  # doctest: +SKIP
        [('()', 'darkolivegreen1'), ('SumBackward0', 'grey'), ('MulBackward0', 'grey'),
         ('w (1)', 'lightblue'), ('AccumulateGrad', 'grey')]
        """
        return [(label, colour) for label, colour in self._dot_boxes().values()]

    def arrows(self) -> list[tuple[str, str, str]]:
        """Every edge as ``(from label, to label, style)``, read from the DOT text.

        ``style`` is ``"arrow"`` (an input to the node that used it),
        ``"line"`` (no arrowhead: a node to a tensor it saved, with
        ``show_saved=True``) or ``"dotted"`` (a view's base to the view).

        >>> import torch
        >>> w = torch.tensor([2.0], requires_grad=True)
        >>> ("w (1)", "AccumulateGrad", "arrow") in draw_graph(w * 3, {"w": w}).arrows()  # doctest: +SKIP
        True
        """
        boxes = self._dot_boxes()
        found = []
        for tail, head, attrs in _DOT_EDGE.findall(self._dot_text()):
            attrs = dict(_DOT_ATTR.findall(attrs))
            style = "line" if attrs.get("dir") == "none" else "dotted" if attrs.get("style") == "dotted" else "arrow"
            found.append((boxes[tail][0], boxes[head][0], style))
        return found

    def _dot_text(self) -> str:
        if self.source is None:
            raise ValueError("this drawing has no DOT text: torchviz could not be imported")
        return self.source

    def _dot_boxes(self) -> dict[str, tuple[str, str]]:
        attrs: dict[str, dict[str, str]] = {}
        for box, body in _DOT_NODE.findall(self._dot_text()):
            attrs.setdefault(box, {}).update(_DOT_ATTR.findall(body))
        return {box: (" ".join(a.get("label", "").strip('"').split()), a.get("fillcolor", "grey"))
                for box, a in attrs.items()}

    def _repr_svg_(self) -> str | None:
        return self.svg

    def _repr_png_(self) -> bytes | None:
        if self.png is not None or self.figure is None:
            return self.png
        return _figure_png(self.figure)

    def __repr__(self) -> str:
        counts = graph_nodes(self.output)
        return (f"<GraphDrawing of {type(self.output.grad_fn).__name__}: "
                f"{sum(counts.values())} backward nodes, drawn with {self.backend}>")


# torchviz's DOT text, one statement per line: `\tn3 [label=... fillcolor=...]` and `\tn3 -> n4 [dir=none]`
# (a quoted label may hold a newline)
_DOT_NODE = re.compile(r'^\t(n\d+) \[((?:[^\]"]|"[^"]*")*)\]', re.M)
_DOT_EDGE = re.compile(r"^\t(n\d+) -> (n\d+)(?: \[([^\]]*)\])?$", re.M)
_DOT_ATTR = re.compile(r'(\w+)=("[^"]*"|[^\s\]]+)')


def _figure_png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


_NODE_LINE = re.compile(r"^(\t)(\d+)(?= \[| ->|$)")
_EDGE_HEAD = re.compile(r"(-> )(\d+)")


def _stable_names(digraph: graphviz.Digraph) -> None:
    # torchviz names nodes by id(), which differs on every run; the names
    # reach the SVG (as <title>s), so committed notebooks would change each
    # time they are executed. Renumber them in order of appearance.
    mapping: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return match.group(1) + mapping.setdefault(match.group(2), f"n{len(mapping)}")

    digraph.body[:] = [_EDGE_HEAD.sub(rename, _NODE_LINE.sub(rename, line))
                       for line in digraph.body]


def _mark_saved(digraph: graphviz.Digraph, output: torch.Tensor, mark: torch.Tensor) -> int:
    """Colour red each saved-tensor box whose tensor shares memory with ``mark``; return how many."""
    from clonelab.inspection import shares_storage

    wanted, stack, seen = set(), [output.grad_fn], set()
    while stack:                                   # every backward node, and what it saved
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        for attr in dir(fn):
            if attr.startswith("_saved_"):
                value = getattr(fn, attr)
                if isinstance(value, torch.Tensor) and value.layout == torch.strided and shares_storage(value, mark):
                    wanted.add((str(id(fn)), attr[len("_saved_"):]))
        stack.extend(next_fn for next_fn, _ in fn.next_functions)
    source = digraph.source                         # torchviz: node -> saved box, "label" starts with attr
    labels = dict(re.findall(r'^\t(\d+) \[label="?(\w+)', source, re.M))
    boxes = {box for fn_id, box in re.findall(r"^\t(\d+) -> (\d+) \[dir=none\]", source, re.M)
             if (fn_id, labels.get(box)) in wanted}
    for box in sorted(boxes):
        digraph.node(box, fillcolor="tomato")
    return len(boxes)


def _leaf_lines_do_not_rank(digraph: graphviz.Digraph) -> None:
    """Let a saved tensor that is also a leaf (``w2`` in ``w2 * f``) stay above its node.

    torchviz draws the saved-tensor line from the node down to the tensor. For
    a leaf, Graphviz then ranks the leaf below the node that saved it, and the
    leaf's own arrow (leaf -> AccumulateGrad -> that node) has to point up.
    ``constraint=false`` keeps the line but lets the leaf's arrows set the layout.
    """
    source = digraph.source
    leaves = set(re.findall(r'^\t(\d+) \[label="[^"]*" fillcolor=lightblue\]', source, re.M))
    digraph.body[:] = [
        line.replace("[dir=none]", "[constraint=false dir=none]")
        if (m := re.match(r"^\t\d+ -> (\d+) \[dir=none\]", line)) and m.group(1) in leaves else line
        for line in digraph.body
    ]


def _make_digraph(output: torch.Tensor, params: dict[str, torch.Tensor],
                  show_saved: bool, show_attrs: bool, mark: torch.Tensor | None = None) -> graphviz.Digraph:
    import torchviz

    try:
        with warnings.catch_warnings():
            # torchviz 0.0.3 compares versions with distutils' LooseVersion,
            # which warns on every call; it is torchviz's business, not the reader's
            warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
            digraph = torchviz.make_dot(output, params=params or None,
                                        show_attrs=show_attrs, show_saved=show_saved)
    except RuntimeError as exc:
        if "backward through the graph a second time" not in str(exc):
            raise
        raise ValueError(
            "show_saved=True (or show_attrs=True) needs the tensors saved for backward, "
            "but backward() has already freed them. Draw the graph before calling "
            "backward(), or call backward(retain_graph=True)."
        ) from exc
    if mark is not None:
        _mark_saved(digraph, output, mark)
    _leaf_lines_do_not_rank(digraph)
    _stable_names(digraph)
    return digraph


def _render(digraph: Any) -> tuple[str | None, bytes | None, str]:
    """The SVG and PNG that `dot` makes, or None and the reason it could not."""
    import graphviz

    if not dot_available():
        return None, None, "Graphviz's `dot` program was not found"
    try:
        svg = digraph.pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        return None, None, "Graphviz's `dot` program could not be run"
    except subprocess.CalledProcessError as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
        first = (err or "").strip().splitlines()[:1]
        return None, None, "Graphviz's `dot` failed" + (f" ({first[0]})" if first else "")
    except OSError as exc:
        return None, None, f"Graphviz's `dot` could not be run ({exc.strerror or exc})"
    try:
        png = digraph.pipe(format="png")
    except (graphviz.ExecutableNotFound, subprocess.CalledProcessError, OSError):
        png = None  # a dot built without PNG output: the SVG alone will do
    return svg, png, ""


def _announce_fallback(reason: str, hint: str) -> None:
    # One line, on stdout: a cell output a reader sees, not a warning that
    # Jupyter shows once and then hides.
    print(f"{reason}, falling back to a matplotlib drawing. {hint}")


def draw_graph(
    output: torch.Tensor,
    params: Mapping[str, torch.Tensor] | None = None,
    *,
    show_saved: bool = False,
    show_attrs: bool = False,
    mark: torch.Tensor | None = None,
) -> GraphDrawing:
    """Draw the autograd graph that produced ``output``, with torchviz.

    ``params`` names leaf tensors, e.g. ``{"weight1": w1}`` or
    ``dict(model.named_parameters())``. ``show_saved`` adds the tensors each
    backward node saved (orange); ``show_attrs`` adds their other saved
    attributes. Call it before ``backward()`` when using those two, because
    backward frees what was saved. ``mark`` (with ``show_saved=True``) colours
    red every saved tensor that shares memory with it: the boxes that an
    in-place write into ``mark`` would make stale (the matplotlib fallback
    does not mark them).

    Without Graphviz's ``dot`` program it prints one line with an install
    hint and returns a matplotlib drawing of the same graph; it never fails
    for that reason.

    >>> import torch
    >>> w1 = torch.tensor([2.0], requires_grad=True)
    >>> g = draw_graph((w1 * 3) ** 2, {"weight1": w1})  # doctest: +SKIP
    >>> "PowBackward0" in g.source  # doctest: +SKIP
    True
    """
    _check_output(output)
    params = _check_params(params)
    require_bool(show_saved, "show_saved")
    require_bool(show_attrs, "show_attrs")
    if mark is not None:
        if not isinstance(mark, torch.Tensor):
            raise TypeError(f"mark must be a tensor (the one an in-place write will change), got {type(mark).__name__}")
        if not show_saved:
            raise ValueError("mark= colours saved tensors, so it needs show_saved=True")

    digraph = svg = png = None
    try:
        import torchviz  # noqa: F401  (imported here only to learn whether it works)
    except ImportError as exc:
        # e.g. torchviz 0.0.3 on Python 3.12 without setuptools (it imports distutils)
        reason = f"torchviz could not be imported ({exc})"
        hint = "Install it: `pip install torchviz setuptools`."
    else:
        digraph = _make_digraph(output, params, show_saved, show_attrs, mark)
        svg, png, reason = _render(digraph)
        hint = install_hint()
    figure = None
    if svg is None:
        _announce_fallback(reason, hint)
        figure = draw_fallback(output, params, show_saved=show_saved)
    return GraphDrawing(output, params, show_saved, show_attrs, digraph, svg, png, figure)


# --------------------------------------------------------------------------
# side_by_side
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, repr=False)
class SideBySide:
    """Two graphs as one picture: an SVG document, and a PNG of the same layout.

    Jupyter, GitHub and nbconvert show it as an image: JupyterLab shows the
    PNG for a notebook it does not trust, the SVG otherwise. ``save``
    writes either format.

    >>> pic = SideBySide("<svg xmlns='http://www.w3.org/2000/svg'/>", None)
    >>> pic._repr_svg_()[:4]
    '<svg'
    """

    svg: str
    png: bytes | None

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_png_(self) -> bytes | None:
        return self.png

    def __repr__(self) -> str:
        return f"<SideBySide: {len(self.svg):,} characters of SVG>"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the picture to ``path``: SVG, or PNG if the name ends in ``.png``.

        >>> SideBySide("<svg/>", None).save(123)
        Traceback (most recent call last):
        ...
        TypeError: path must be a str or os.PathLike; got int
        """
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike; got {type(path).__name__}")
        if os.fspath(path).lower().endswith(".png"):
            if self.png is None:
                raise ValueError("this picture has no PNG (dot could not make one); save as .svg")
            with open(path, "wb") as f:
                f.write(self.png)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(self.svg)


_SVG_NS = "http://www.w3.org/2000/svg"
_UNITS_PT = {"pt": 1.0, "px": 0.75, "in": 72.0, "cm": 72 / 2.54, "mm": 72 / 25.4, "": 0.75}
# the frame around the two pictures, in points (1/72 in)
_MARGIN, _GAP, _TITLE_H = 10.0, 24.0, 30.0


def _length_pt(value: str) -> float:
    match = re.fullmatch(r"\s*([0-9.]+)\s*([a-z]*)\s*", value or "")
    if not match or match.group(2) not in _UNITS_PT:
        raise ValueError(f"cannot read the SVG length {value!r}")
    return float(match.group(1)) * _UNITS_PT[match.group(2)]


def _frame(sizes: Sequence[tuple[float, float]], titles: Sequence[str]) -> tuple[float, list[float]]:
    # One scale for both pictures, not one height each: then a node has the
    # same size in both and the graphs compare at a glance. Shrink (never
    # enlarge) so the whole fits about a notebook's width.
    natural_w = sum(w for w, _ in sizes) + _GAP + 2 * _MARGIN
    scale = min(1.0, 980.0 / natural_w, 860.0 / max(h for _, h in sizes))
    panel_w = [max(w * scale, 8.0 * len(t)) for (w, _), t in zip(sizes, titles)]
    return scale, panel_w


def _compose_svg(svgs: Sequence[str], titles: Sequence[str]) -> str:
    import xml.etree.ElementTree as ET

    # without these, ElementTree writes the SVG namespace as "ns0:"
    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    roots = [ET.fromstring(s.encode("utf-8")) for s in svgs]
    sizes = [(_length_pt(r.get("width", "")), _length_pt(r.get("height", ""))) for r in roots]
    scale, panel_w = _frame(sizes, titles)
    total_w = sum(panel_w) + _GAP + 2 * _MARGIN
    total_h = _TITLE_H + max(h for _, h in sizes) * scale + _MARGIN

    outer = ET.Element(f"{{{_SVG_NS}}}svg", {
        "width": f"{total_w:.1f}pt", "height": f"{total_h:.1f}pt",
        "viewBox": f"0 0 {total_w:.1f} {total_h:.1f}", "version": "1.1",
    })
    # a white page, so the black text stays readable under dark themes
    ET.SubElement(outer, f"{{{_SVG_NS}}}rect",
                  {"width": "100%", "height": "100%", "fill": "white"})
    x = _MARGIN
    for i, (root, (w, h), pw, title) in enumerate(zip(roots, sizes, panel_w, titles)):
        text = ET.SubElement(outer, f"{{{_SVG_NS}}}text", {
            "x": f"{x + pw / 2:.1f}", "y": f"{_TITLE_H - 10:.1f}", "text-anchor": "middle",
            "font-family": "Helvetica,Arial,sans-serif", "font-size": "14",
            "font-weight": "bold",
        })
        text.text = title
        for el in root.iter():  # ids must be unique in the combined document
            if "id" in el.attrib:
                el.set("id", f"p{i}_{el.get('id')}")
        if "viewBox" not in root.attrib:
            root.set("viewBox", f"0 0 {w / 0.75:.2f} {h / 0.75:.2f}")
        root.set("x", f"{x + (pw - w * scale) / 2:.1f}")
        root.set("y", f"{_TITLE_H:.1f}")
        root.set("width", f"{w * scale:.1f}")
        root.set("height", f"{h * scale:.1f}")
        root.set("preserveAspectRatio", "xMidYMin meet")
        outer.append(root)
        if i == 0:
            sep = x + pw + _GAP / 2
            ET.SubElement(outer, f"{{{_SVG_NS}}}line", {
                "x1": f"{sep:.1f}", "x2": f"{sep:.1f}", "y1": "6", "y2": f"{total_h - 6:.1f}",
                "stroke": "#cccccc", "stroke-width": "1",
            })
        x += pw + _GAP
    return ET.tostring(outer, encoding="unicode")


def _compose_png(pngs: Sequence[bytes], svgs: Sequence[str], titles: Sequence[str]) -> bytes:
    # The same frame as the SVG, in pixels. Pillow comes with matplotlib, and
    # so does the DejaVu font used for the titles.
    import xml.etree.ElementTree as ET

    from matplotlib import font_manager
    from PIL import Image, ImageDraw, ImageFont

    images = [Image.open(io.BytesIO(p)).convert("RGB") for p in pngs]
    roots = [ET.fromstring(s.encode("utf-8")) for s in svgs]
    sizes = [(_length_pt(r.get("width", "")), _length_pt(r.get("height", ""))) for r in roots]
    scale, panel_w = _frame(sizes, titles)
    px = images[0].width / sizes[0][0]  # pixels per point that dot used (96 dpi: 4/3)
    if scale < 1.0:
        images = [im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))),
                            Image.LANCZOS) for im in images]
    panel_px = [max(round(pw * px), im.width) for pw, im in zip(panel_w, images)]
    margin, gap, title_h = (round(v * px) for v in (_MARGIN, _GAP, _TITLE_H))
    width = sum(panel_px) + gap + 2 * margin
    height = title_h + max(im.height for im in images) + margin
    canvas = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(canvas)
    font_file = font_manager.findfont(font_manager.FontProperties(family="DejaVu Sans",
                                                                  weight="bold"))
    font = ImageFont.truetype(font_file, size=round(14 * px))
    x = margin
    for i, (im, pw, title) in enumerate(zip(images, panel_px, titles)):
        draw.text((x + pw // 2, title_h - round(10 * px)), title, fill="black", font=font,
                  anchor="ms")
        canvas.paste(im, (x + (pw - im.width) // 2, title_h))
        if i == 0:
            sep = x + pw + gap // 2
            draw.line([(sep, 6), (sep, height - 6)], fill="#cccccc", width=1)
        x += pw + gap
    out = io.BytesIO()
    canvas.save(out, format="PNG", optimize=True)
    return out.getvalue()


def side_by_side(
    g1: GraphDrawing | torch.Tensor | graphviz.Digraph,
    g2: GraphDrawing | torch.Tensor | graphviz.Digraph,
    titles: Sequence[str] = ("identity = x", "identity = x.clone()"),
) -> SideBySide | Figure:
    """Show two autograd graphs next to each other, each under its title.

    Each graph may be a :func:`draw_graph` result, an output tensor, or a
    ``graphviz.Digraph`` (e.g. from ``torchviz.make_dot``). With Graphviz it
    returns one picture (:class:`SideBySide`); otherwise one matplotlib
    figure with two panels drawn by :func:`draw_fallback` (a bare Digraph
    cannot be redrawn without ``dot``, so its panel then says so).

    >>> import torch
    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> f = w * 1
    >>> pic = side_by_side((f + f) ** 2, (f.clone() + f) ** 2)  # doctest: +SKIP
    """
    if isinstance(titles, str) or not isinstance(titles, Sequence):
        raise TypeError(f"titles must be a pair of str, e.g. ('alias', 'clone'); got {titles!r}")
    if len(titles) != 2:
        raise ValueError(f"titles must hold exactly 2 titles; got {len(titles)}")
    for t in titles:
        if not isinstance(t, str):
            raise TypeError(f"titles must be str; got {type(t).__name__} ({t!r})")

    items = []  # (svg, png, (output, params, show_saved) or None)
    problem = ""
    for argname, g in (("g1", g1), ("g2", g2)):
        if isinstance(g, GraphDrawing):
            items.append((g.svg, g.png, (g.output, g.params, g.show_saved)))
        elif isinstance(g, torch.Tensor):
            _check_output(g, argname)
            svg = png = None
            try:
                digraph = _make_digraph(g, {}, False, False)
            except ImportError as exc:
                problem = f"torchviz could not be imported ({exc})"
            else:
                svg, png, reason = _render(digraph)
                problem = problem or reason
            items.append((svg, png, (g, {}, False)))
        elif _is_graphviz(g):
            svg, png, reason = _render(g)
            problem = problem or reason
            items.append((svg, png, None))
        else:
            raise TypeError(
                f"{argname} must be a draw_graph() result, an output tensor or a "
                f"graphviz.Digraph; got {type(g).__name__}"
            )

    svgs = [svg for svg, _, _ in items]
    if all(svg is not None for svg in svgs):
        pngs = [png for _, png, _ in items]
        png = _compose_png(pngs, svgs, titles) if all(p is not None for p in pngs) else None
        return SideBySide(_compose_svg(svgs, titles), png)
    if problem:
        _announce_fallback(problem, install_hint())
    return _side_by_side_figure([src for _, _, src in items], titles)


def _is_graphviz(obj: Any) -> bool:
    try:
        import graphviz
    except ImportError:
        return False
    return isinstance(obj, (graphviz.Digraph, graphviz.Graph, graphviz.Source))


def _side_by_side_figure(sources: list, titles: Sequence[str]) -> Figure:
    import matplotlib.pyplot as plt

    layouts = [None if src is None else _layout(_walk(*src)) for src in sources]
    drawn = [lay for lay in layouts if lay is not None]
    # one scale for both panels, as in the SVG version
    scale = _fit_scale(drawn, 4.7, 12.5) if drawn else 1.0
    tallest = max((lay.height for lay in drawn), default=2.0) * scale
    fig_h = min(max(tallest + 1.7, 3.0), 14.5)
    fig, axes = plt.subplots(1, 2, figsize=(10, fig_h))
    fig.subplots_adjust(left=0.02, right=0.98, wspace=0.08,
                        top=1 - 0.8 / fig_h, bottom=0.8 / fig_h)
    for ax, layout, title in zip(axes, layouts, titles):
        if layout is None:
            ax.set_axis_off()
            ax.set_title(title, fontsize=11, fontweight="bold")
            ax.text(0.5, 0.5, "a bare graphviz.Digraph needs `dot` to be drawn;\n"
                    "pass draw_graph(...)'s result or the output tensor instead",
                    ha="center", va="center", fontsize=9, wrap=True, transform=ax.transAxes)
            continue
        _draw_layout(layout, ax, title, scale)
    fig.suptitle("autograd graphs (matplotlib drawing)", fontsize=12, y=1 - 0.12 / fig_h, va="top")
    plt.close(fig)
    return fig
