"""Autograd graphs drawn by torchviz and Graphviz's ``dot``, or by matplotlib when ``dot`` is missing (notebook 06)."""

from __future__ import annotations

import collections
import dataclasses
import io
import os
import re
import subprocess
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch

from clonelab import _fallback
from clonelab._autograd import backward_nodes, require_graph, saved_tensors
from clonelab._checks import require_bool, require_named, require_tensor
from clonelab._fallback import dot_available, install_hint
from clonelab.inspection import shares_storage

if TYPE_CHECKING:  # only for type hints: these imports are heavy or optional
    import graphviz
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["GraphDrawing", "dot_available", "draw_fallback", "draw_graph", "graph_nodes", "install_hint",
           "side_by_side"]
_TITLE, _PIP = "autograd graph (matplotlib drawing)", "Install it: `pip install torchviz setuptools`."


def _check_params(params: Any) -> dict[str, torch.Tensor]:
    if not (params is None or isinstance(params, Mapping) and not params):   # None or {}: no names to show
        require_named(params, "params", "tensor", require_tensor)
    return dict(params or {})


def graph_nodes(output: torch.Tensor) -> collections.Counter[str]:
    """Count the backward nodes reachable from ``output.grad_fn`` by class name: the drawing's grey boxes.

    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> graph_nodes((w * 1).clone() ** 2) - graph_nodes((w * 1) ** 2)
    Counter({'CloneBackward0': 1})
    """
    return collections.Counter(type(node).__name__ for node in backward_nodes(output))


def draw_fallback(output: torch.Tensor, params: Mapping[str, torch.Tensor] | None = None, *,
                  ax: Axes | None = None, title: str | None = None, show_saved: bool = False) -> Figure:
    """Draw ``output``'s graph with matplotlib, as :func:`draw_graph` does without ``dot``, into ``ax`` or a new figure.

    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> draw_fallback((w * 3) ** 2, {"w": w}).axes[0].get_title()
    'autograd graph (matplotlib drawing)'
    """
    require_graph(output)
    params = _check_params(params)
    return _fallback.figure([(output, params, show_saved, _TITLE if title is None else title)], ax)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class GraphDrawing:
    """What :func:`draw_graph` and :func:`side_by_side` return: ``sources``, ``(output, params, show_saved,
    title)`` per graph; ``svg`` and ``png``, ``dot``'s (without it, ``png`` is the matplotlib ``figure``'s);
    ``digraph``, the DOT graph (None without torchviz), whose text ``boxes()`` and ``arrows()`` read.

    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> draw_graph(w * 3)  # doctest: +SKIP
    <GraphDrawing of MulBackward0: 2 backward nodes, drawn with graphviz>
    """

    sources: tuple[tuple[torch.Tensor, dict[str, torch.Tensor], bool, str], ...]
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
        return None if self.digraph is None else self.digraph.source

    def boxes(self) -> list[tuple[str, str]]:
        """Every box as ``(label on one line, colour)``; backward nodes are ``"grey"``.

        >>> w = torch.tensor([2.0], requires_grad=True)
        >>> draw_graph(w * 3, {"w": w}).boxes()  # doctest: +SKIP
        [('(1)', 'darkolivegreen1'), ('MulBackward0', 'grey'), ('w (1)', 'lightblue'), ('AccumulateGrad', 'grey')]
        """
        return list(self._boxes().values())

    def arrows(self) -> list[tuple[str, str, str]]:
        """Every edge as ``(from label, to label, style)``: ``"arrow"`` (from an input), ``"dotted"``
        (a view's base to the view) or ``"line"`` (a node to a tensor it saved, no arrowhead).

        >>> w = torch.tensor([2.0], requires_grad=True)
        >>> ("w (1)", "AccumulateGrad", "arrow") in draw_graph(w * 3, {"w": w}).arrows()  # doctest: +SKIP
        True
        """
        box = self._boxes()
        return [(box[tail][0], box[head][0], "line" if "dir=none" in attrs else "dotted" if "dotted" in attrs
                 else "arrow") for tail, head, attrs in _DOT_EDGE.findall(self.source)]

    def _boxes(self) -> dict[str, tuple[str, str]]:
        if self.source is None:
            raise ValueError("this drawing has no DOT text: torchviz could not be imported")
        attrs: dict[str, dict[str, str]] = {}
        for box, body in _DOT_NODE.findall(self.source):  # a box declared twice: the later values win
            attrs.setdefault(box, {}).update(_DOT_ATTR.findall(body))
        return {box: (" ".join(a.get("label", "").strip('"').split()), a.get("fillcolor", "grey"))
                for box, a in attrs.items()}

    def _repr_svg_(self) -> str | None:
        return self.svg

    def _repr_png_(self) -> bytes:
        return self.png

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the picture to ``path``: PNG if its name ends in ``.png``, else SVG (only ``dot`` makes one)."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike; got {type(path).__name__}")
        png = os.fspath(path).lower().endswith(".png")
        if not png and self.svg is None:
            raise ValueError("this drawing has no SVG (`dot` did not draw it): save it as .png")
        with open(path, "wb") as f:
            f.write(self.png if png else self.svg.encode("utf-8"))

    def __repr__(self) -> str:
        return (f"<GraphDrawing of {' and '.join(type(s[0].grad_fn).__name__ for s in self.sources)}: "
                f"{sum(len(backward_nodes(s[0])) for s in self.sources)} backward nodes, drawn with {self.backend}>")


# torchviz's DOT text, a statement a line: `\tn3 [label=... fillcolor=...]`, `\tn3 -> n4 [dir=none]`
_DOT_NODE = re.compile(r'^\t+([a-z]\d+) \[((?:[^\]"]|"[^"]*")*)\]', re.M)
_DOT_EDGE = re.compile(r"^\t+([a-z]\d+) -> ([a-z]\d+)(?: \[([^\]]*)\])?$", re.M)
_DOT_ATTR = re.compile(r'(\w+)=("[^"]*"|[^\s\]]+)')
_DOT_ID = re.compile(r"(^\t|-> )(\w+)(?= \[| ->|$)", re.M)


def _renamed(body: list[str], prefix: str) -> list[str]:
    # torchviz names nodes by id(), new each run; prefix0, prefix1, ... in order: stable notebooks, two graphs apart
    names: dict[str, str] = {}
    return [_DOT_ID.sub(lambda m: m[1] + names.setdefault(m[2], f"{prefix}{len(names)}"), line) for line in body]


def _make_digraph(output: torch.Tensor, params: dict[str, torch.Tensor], show_saved: bool = False,
                  show_attrs: bool = False, mark: torch.Tensor | None = None) -> graphviz.Digraph:
    import torchviz
    nodes = backward_nodes(output)  # alive while torchviz walks them, so that its ids are theirs
    reasons = [t for fn in nodes for _, t in saved_tensors(fn) if isinstance(t, str)] if show_saved or show_attrs else []
    if reasons:
        raise ValueError(_fallback.unreadable(reasons[0]))
    with warnings.catch_warnings():  # torchviz 0.0.3's distutils warning is not the reader's business
        warnings.filterwarnings("ignore", "distutils Version classes", DeprecationWarning)
        digraph = torchviz.make_dot(output, params=params or None, show_attrs=show_attrs, show_saved=show_saved)
    source = digraph.source
    if mark is not None:  # paint red each saved box whose tensor shares memory with mark
        wanted = {(str(id(fn)), name) for fn in nodes for name, t in saved_tensors(fn)
                  if not isinstance(t, str) and t.layout == torch.strided and shares_storage(t, mark)}
        # a box's first label: a saved leaf's box is relabelled by the leaf's own (w2 for "self" in w2 * f)
        labels = dict(reversed(re.findall(r'^\t(\d+) \[label="?([\w\[\]]+)', source, re.M)))
        for fn_id, box in re.findall(r"^\t(\d+) -> (\d+) \[dir=none\]", source, re.M):
            if (fn_id, labels.get(box)) in wanted:
                digraph.node(box, fillcolor="tomato")
    # A saved tensor that is also a leaf (w2 in w2 * f): dot would rank it below the node that saved it,
    # and its own arrow to that node would point up; constraint=false keeps the line out of the ranking.
    leaves = set(re.findall(r'^\t(\d+) \[label="[^"]*" fillcolor=lightblue\]', source, re.M))
    digraph.body[:] = _renamed([re.sub(r"-> (\d+) \[dir=none\]", lambda m: m[0].replace("[", "[constraint=false ")
                                       if m[1] in leaves else m[0], line) for line in digraph.body], "n")
    return digraph


def _drawing(sources: list, digraph: Any, reason: str, hint: str, announce: bool = True) -> GraphDrawing:
    """``dot``'s SVG and PNG of ``digraph``; or, saying why unless told not to, matplotlib's drawing."""
    svg = png = figure = None
    if digraph is not None and not dot_available():
        reason, hint = "Graphviz's `dot` program was not found", install_hint()
    elif digraph is not None:
        try:
            svg, png = digraph.pipe(format="svg", encoding="utf-8"), digraph.pipe(format="png")
        except subprocess.CalledProcessError as exc:
            err = (exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or "").strip()
            reason = "Graphviz's `dot` failed" + (f" ({err.splitlines()[0]})" if err else "")
        except (RuntimeError, OSError):  # graphviz.ExecutableNotFound is a RuntimeError
            reason = "Graphviz's `dot` could not be run"
    if svg is None:
        if announce:  # on stdout: a reader sees it in every cell, unlike a warning
            print(f"{reason}, falling back to a matplotlib drawing. {hint}")
        figure, buffer = _fallback.figure(sources), io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
        png = buffer.getvalue()
    return GraphDrawing(tuple(sources), digraph, svg, png, figure)


def draw_graph(output: torch.Tensor, params: Mapping[str, torch.Tensor] | None = None, *,
               show_saved: bool = False, show_attrs: bool = False, mark: torch.Tensor | None = None) -> GraphDrawing:
    """Draw the autograd graph that produced ``output`` with torchviz (notebook 06).

    ``params`` names leaves, e.g. ``dict(model.named_parameters())``. ``show_saved`` adds the tensors each node
    saved for backward (orange), ``show_attrs`` its other saved values; ``mark`` (with ``show_saved``) paints red
    each saved tensor that shares memory with it. Without ``dot``: a printed install hint and the fallback drawing.

    >>> w1 = torch.tensor([2.0], requires_grad=True)
    >>> "PowBackward0" in draw_graph((w1 * 3) ** 2, {"weight1": w1}).source  # doctest: +SKIP
    True
    """
    require_graph(output)
    params = _check_params(params)
    require_bool(show_saved, "show_saved")
    require_bool(show_attrs, "show_attrs")
    if mark is not None and not isinstance(mark, torch.Tensor):
        raise TypeError(f"mark must be a tensor (the one an in-place write will change), got {type(mark).__name__}")
    if mark is not None and not show_saved:
        raise ValueError("mark= colours saved tensors, so it needs show_saved=True")
    try:
        digraph, reason = _make_digraph(output, params, show_saved, show_attrs, mark), ""
    except ImportError as exc:  # e.g. torchviz 0.0.3 on Python 3.12 without setuptools (it imports distutils)
        digraph, reason = None, f"torchviz could not be imported ({exc})"
    return _drawing([(output, params, show_saved, _TITLE)], digraph, reason, _PIP)


def side_by_side(g1: GraphDrawing | torch.Tensor, g2: GraphDrawing | torch.Tensor,
                 titles: Sequence[str] = ("identity = x", "identity = x.clone()")) -> GraphDrawing:
    """Draw two graphs (:func:`draw_graph` results or output tensors) side by side at one scale, each under its title.

    >>> w = torch.tensor([2.0], requires_grad=True)
    >>> pair = side_by_side(w * 2, (w * 2).clone(), titles=("alias", "clone"))  # doctest: +SKIP
    >>> pair.source.count("subgraph cluster_"), pair.png[:4], pair  # doctest: +SKIP
    (2, b'\\x89PNG', <GraphDrawing of MulBackward0 and CloneBackward0: 5 backward nodes, drawn with graphviz>)
    """
    for argname, g in (("g1", g1), ("g2", g2)):
        if isinstance(g, GraphDrawing) and len(g.sources) != 1:
            raise TypeError(f"{argname} must be a draw_graph() result or an output tensor, not a pair")
        if not isinstance(g, GraphDrawing):
            require_graph(g, argname)
    sources = [g.sources[0][:3] + (t,) if isinstance(g, GraphDrawing) else (g, {}, False, t)
               for g, t in zip((g1, g2), titles)]
    both, reason = None, "torchviz could not be imported"
    try:
        digraphs = [g.digraph if isinstance(g, GraphDrawing) else _make_digraph(g, {}) for g in (g1, g2)]
    except ImportError as exc:
        digraphs, reason = [None], f"torchviz could not be imported ({exc})"
    if None not in digraphs:
        import graphviz
        both = graphviz.Digraph(node_attr=digraphs[0].node_attr, graph_attr={"size": "10,12"})  # <= 960 px wide
        for i, (digraph, title) in enumerate(zip(digraphs, titles)):
            with both.subgraph(name=f"cluster_{i}") as cluster:
                cluster.attr(label=title, fontname="Helvetica-Bold", fontsize="14", color="#cccccc")
                cluster.body += _renamed(digraph.body, "ab"[i])
    said = all(isinstance(g, GraphDrawing) and g.svg is None for g in (g1, g2))  # draw_graph said why
    return _drawing(sources, both, reason, _PIP, announce=not said)
