"""Tests for clonelab.graphs and its helpers: the walk, torchviz drawings, side_by_side and the fallback."""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported anywhere: no windows in tests

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

from clonelab import _fallback, graphs  # noqa: E402
from clonelab._autograd import FREED, MODIFIED, backward_nodes, saved_tensors, where_it_raises  # noqa: E402
from clonelab.graphs import (  # noqa: E402
    GraphDrawing,
    dot_available,
    draw_fallback,
    draw_graph,
    graph_nodes,
    install_hint,
    side_by_side,
)

# torchviz 0.0.3's own LooseVersion warning, from the tests that call make_dot directly
pytestmark = pytest.mark.filterwarnings("ignore:distutils Version classes:DeprecationWarning")
needs_dot = pytest.mark.skipif(not dot_available(), reason="Graphviz's dot is not installed")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TOY_FUNCTIONS = ["MulBackward0", "AccumulateGrad", "AddBackward0", "PowBackward0", "SubBackward0"]


def toy(clone: bool):
    """The blog post's toy model: identity is the feature, aliased or cloned."""
    w1 = torch.tensor([2.0], requires_grad=True)
    w2 = torch.tensor([3.0], requires_grad=True)
    f = w1 * 1
    ident = f.clone() if clone else f
    out = ident + w2 * f
    loss = (out - 8.5) ** 2
    return loss, {"weight1": w1, "weight2": w2}


class Block(nn.Module):
    """A BasicBlock laid out like torchvision's, with a downsample branch."""

    def __init__(self, cin: int = 4, cout: int = 8, stride: int = 2):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.downsample(x)
        return self.relu(out)


def block_output():
    torch.manual_seed(0)
    block = Block()
    x = torch.randn(2, 4, 8, 8, requires_grad=True)
    return block(x), {**dict(block.named_parameters()), "x": x}


@pytest.fixture
def no_dot(tmp_path, monkeypatch):
    """PATH holds only an empty folder, so `dot` cannot be found."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert not dot_available()


def svg_text(svg: str) -> str:
    return "\n".join(el.text or "" for el in ET.fromstring(svg).iter())  # also proves the SVG is well-formed


def png_width(png: bytes) -> int:
    assert png[:8] == PNG_MAGIC
    return int.from_bytes(png[16:20], "big")


# ---------------------------------------------------------------- the walk


def test_graph_nodes_of_the_toy_model():
    assert graph_nodes(toy(False)[0]) == collections.Counter(
        {"MulBackward0": 2, "AccumulateGrad": 2, "AddBackward0": 1, "PowBackward0": 1, "SubBackward0": 1})


def test_alias_and_clone_differ_by_exactly_one_clone_node():
    alias, clone = graph_nodes(toy(False)[0]), graph_nodes(toy(True)[0])
    assert clone - alias == collections.Counter({"CloneBackward0": 1})
    assert alias - clone == collections.Counter()


def test_backward_nodes_visits_each_node_once_depth_first_first_input_first():
    w = torch.ones(2, requires_grad=True)
    y = w * 2
    nodes = backward_nodes((y + y).exp())           # y is used twice: its node once
    assert [type(n).__name__ for n in nodes] == ["ExpBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"]
    assert len({id(n) for n in nodes}) == len(nodes)
    loss, _ = toy(False)
    names = [type(n).__name__ for n in backward_nodes(loss)]
    assert names == [type(n).__name__ for n in backward_nodes(loss)]   # the same order every time
    assert names == ["PowBackward0", "SubBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad",
                     "MulBackward0", "AccumulateGrad"]


def test_where_it_raises_tells_the_write_from_backward_and_runs_backward_once():
    w = torch.ones(3, requires_grad=True)
    where, message = where_it_raises(lambda: w.add_(1))
    assert where == "at the write" and "leaf Variable" in message and w.grad is None
    where, message = where_it_raises(lambda: w.exp().mul_(2))        # exp saved its output, then it was written
    assert where == "at backward" and "modified by an inplace operation" in message
    assert where_it_raises(lambda: w * 3) == ("no error", "") and torch.equal(w.grad, torch.full((3,), 3.0))
    assert where_it_raises(lambda: torch.ones(2).relu_()) == ("no error", "")    # needs no grad: no backward


@pytest.mark.parametrize("run, error", [(None, "run must be a function"), (lambda: 3.0, "it returned float")])
def test_where_it_raises_names_what_is_wrong(run, error):
    with pytest.raises(TypeError, match=error):
        where_it_raises(run)


def test_backward_nodes_of_a_deep_graph_needs_no_recursion():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(3 * sys.getrecursionlimit()):
        y = y + 1
    assert len(backward_nodes(y)) == 3 * sys.getrecursionlimit() + 1


def test_saved_tensors_reads_tensors_tuples_and_freed_ones():
    w = torch.ones(3, requires_grad=True)
    y = w * w
    assert [(name, torch.is_tensor(t)) for name, t in saved_tensors(y.grad_fn)] == [("other", True), ("self", True)]
    idx = torch.tensor([0, 2])
    assert [name for name, _ in saved_tensors(w[idx].grad_fn)] == ["indices[0]"]
    y.sum().backward()
    assert saved_tensors(y.grad_fn) == [("other", FREED), ("self", FREED)]


def test_a_saved_tensor_written_in_place_is_modified_not_freed():
    """After an in-place write into a saved tensor, backward never ran: nothing is freed, backward would raise."""
    from clonelab.memory import saved_by_node

    s = (torch.ones(3, requires_grad=True) * 2).sigmoid()
    node = s.grad_fn
    s.mul_(2)
    assert saved_tensors(node) == [("result", MODIFIED)]
    assert [r["shape"] for r in saved_by_node(s) if r["saved"] == "result"] == ["modified in place"]
    with pytest.raises(ValueError, match="an in-place write has changed one since it was saved"):
        draw_fallback(s * 1, show_saved=True)


@pytest.mark.parametrize("make", [lambda: toy(False)[0], lambda: toy(True)[0], lambda: block_output()[0],
                                  lambda: (torch.ones(3, requires_grad=True) * 2).relu()])
def test_saved_by_node_rows_come_from_the_walk_and_saved_tensors(make):
    """The rows of memory.saved_by_node, rebuilt from backward_nodes and saved_tensors (before and after backward)."""
    from clonelab.memory import saved_by_node

    out = make()
    for after_backward in (False, True):
        if after_backward:
            out.sum().backward()
        rows = []
        for node in backward_nodes(out):
            name, saved = type(node).__name__, saved_tensors(node)
            rows += [[name, label, t, "-", "-"] if isinstance(t, str) else
                     [name, label, tuple(t.shape), str(t.dtype).replace("torch.", ""), t.numel() * t.element_size()]
                     for label, t in saved] or [[name, "(nothing)", "-", "-", 0]]
        assert rows == [list(r) for r in saved_by_node(out).rows]


# ---------------------------------------------------------------- draw_graph with dot


@needs_dot
@pytest.mark.parametrize("clone", [False, True])
def test_draw_graph_makes_svg_and_png_that_name_every_node(clone):
    loss, params = toy(clone)
    g = draw_graph(loss, params)
    assert isinstance(g, GraphDrawing) and g.backend == "graphviz" and g.figure is None
    assert g._repr_svg_() == g.svg and g._repr_png_() == g.png and g.png[:8] == PNG_MAGIC
    text = svg_text(g.svg)
    for name in TOY_FUNCTIONS + ["weight1", "weight2"]:
        assert name in text
    assert ("CloneBackward0" in text) is clone
    assert "PowBackward0" in repr(g) and "graphviz" in repr(g)


@needs_dot
def test_draw_graph_output_is_the_same_on_every_run():
    first, second = draw_graph(*toy(True)), draw_graph(*toy(True))
    assert first.svg == second.svg
    assert not re.search(r"\d{7,}", first.source)  # no id() in the node names


@needs_dot
def test_show_saved_and_show_attrs_add_to_the_picture():
    loss, params = toy(clone=False)
    saved = draw_graph(loss, params, show_saved=True)
    assert "orange" in saved.source and "orange" not in draw_graph(loss, params).source
    assert {"self", "other"} <= set(svg_text(saved.svg).split())  # PowBackward0 saves self, MulBackward0 other
    assert "exponent" in draw_graph(loss, show_attrs=True).source


def test_show_saved_after_backward_explains_what_to_do():
    loss, params = toy(clone=False)
    loss.backward()
    for draw in (lambda: draw_graph(loss, params, show_saved=True), lambda: draw_graph(loss, show_attrs=True),
                 lambda: draw_fallback(loss, params, show_saved=True)):
        with pytest.raises(ValueError, match="retain_graph=True"):
            draw()
    assert isinstance(draw_graph(loss, params), GraphDrawing)  # without saved tensors it still works


@pytest.mark.parametrize("clone", [False, True])
def test_boxes_and_arrows_read_the_toy_graph(clone):
    loss, params = toy(clone)
    g = draw_graph(loss, params)  # with or without dot: the DOT text is torchviz's
    colours = collections.Counter(colour for _, colour in g.boxes())
    assert colours == {"grey": 7 + clone, "lightblue": 2, "darkolivegreen1": 1}
    arrows = g.arrows()
    assert ("weight1 (1)", "AccumulateGrad", "arrow") in arrows and ("PowBackward0", "(1)", "arrow") in arrows
    assert all(style == "arrow" for _, _, style in arrows)
    assert (("MulBackward0", "CloneBackward0", "arrow") in arrows) is clone


def test_boxes_and_arrows_read_saved_tensors_marks_and_views():
    loss, params = toy(clone=False)
    g = draw_graph(loss, params, show_saved=True)
    # the later declaration wins: w2, saved as `self`, is drawn as the blue leaf
    assert sorted(label for label, colour in g.boxes() if colour == "orange") == ["other ()", "other (1)", "self (1)"]
    assert ("weight2 (1)", "lightblue") in g.boxes() and ("MulBackward0", "weight2 (1)", "line") in g.arrows()
    w = torch.ones(2, requires_grad=True)
    t = w * 2
    v = t[0:1]
    view = draw_graph(v, {"w": w, "t": t, "v": v})
    assert ("t (2)", "darkolivegreen3") in view.boxes() and ("t (2)", "v (1)", "dotted") in view.arrows()


def test_mark_paints_every_saved_copy_of_the_tensor_about_to_be_written():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    y = x.sigmoid()                     # sigmoid saves its output y ...
    z = (y * w).sum()                   # ... and the mul saves y too, for w's gradient
    marked = draw_graph(z, {"x": x, "w": w}, show_saved=True, mark=y)
    assert sorted(label for label, colour in marked.boxes() if colour == "tomato") == ["result (3)", "self (3)"]
    assert "tomato" not in draw_graph(z, {"x": x, "w": w}, show_saved=True, mark=torch.zeros(3)).source


def test_mark_paints_a_saved_leaf_whose_box_is_the_leafs_own():
    w, w2 = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    out = w2 * (w * 1)                  # the mul saves the leaf w2 as "self": torchviz draws one box for both
    marked = draw_graph(out, {"w": w, "w2": w2}, show_saved=True, mark=w2)
    assert [label for label, colour in marked.boxes() if colour == "tomato"] == ["w2 (3)"]


@needs_dot
def test_a_saved_leaf_stays_above_the_node_that_saved_it():
    # w2 is saved by w2 * f and is a leaf: every arrow must still point down (y grows down in dot's layout)
    g = draw_graph(*toy(clone=False), show_saved=True)
    y = {p[1]: float(p[3]) for p in (line.split() for line in g.digraph.pipe(format="plain", encoding="utf-8")
                                     .splitlines()) if p and p[0] == "node"}
    for tail, head, attrs in graphs._DOT_EDGE.findall(g.source):
        assert "dir=none" in attrs or y[tail] > y[head], f"{tail} -> {head} points up"


# ---------------------------------------------------------------- side_by_side with dot


@needs_dot
def test_side_by_side_is_one_graph_with_two_titled_clusters(tmp_path):
    pair = side_by_side(draw_graph(*toy(False)), toy(True)[0], titles=("alias", "clone"))
    assert isinstance(pair, GraphDrawing) and pair.backend == "graphviz"
    source = pair.source
    assert source.count("subgraph cluster_") == 2 and 'label=alias' in source and 'label=clone' in source
    first, second = source.split("subgraph cluster_1")
    assert "CloneBackward0" not in first and "CloneBackward0" in second
    labels = [label for label, _ in pair.boxes()]
    assert collections.Counter(labels)["PowBackward0"] == 2 and labels.count("CloneBackward0") == 1
    ids = re.findall(r"^\t+(\w+) \[label", source, re.M)
    assert len(ids) == len(set(ids)) == len(labels)        # each node once, none shared by the clusters
    text = svg_text(pair.svg)
    assert "alias" in text and "clone" in text and "CloneBackward0" in text
    assert png_width(pair.png) <= 1000                     # fits a JupyterLab column
    assert "PowBackward0 and PowBackward0" in repr(pair)
    pair.save(tmp_path / "pair.svg")
    pair.save(str(tmp_path / "pair.png"))
    assert ET.parse(tmp_path / "pair.svg").getroot().tag.endswith("svg")
    assert (tmp_path / "pair.png").read_bytes() == pair.png


@needs_dot
def test_side_by_side_keeps_the_saved_and_marked_boxes():
    z = torch.randn(2, 3, requires_grad=True)
    x = torch.sigmoid(z)
    pair = side_by_side(draw_graph(z * 2, {"z": z}), draw_graph(x, {"z": z, "x": x}, show_saved=True, mark=x))
    assert ("result (2, 3)", "tomato") in pair.boxes() and ("x (2, 3)", "darkolivegreen1") in pair.boxes()


@needs_dot
def test_side_by_side_with_a_fallback_drawing_draws_both_with_matplotlib(monkeypatch, capsys):
    alias = draw_graph(*toy(False))
    monkeypatch.setenv("PATH", "")
    clone = draw_graph(*toy(True))
    capsys.readouterr()
    pair = side_by_side(alias, clone)
    assert pair.backend == "matplotlib" and len(pair.figure.axes) == 2
    assert "not found" in capsys.readouterr().out   # alias was drawn by dot: nothing said it yet


# ---------------------------------------------------------------- without dot


def test_without_dot_draw_graph_prints_one_line_and_falls_back(no_dot, capsys):
    g = draw_graph(*toy(clone=True))  # must not raise
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "`dot`" in out and "not found" in out and "matplotlib" in out
    assert install_hint() in out
    assert g.backend == "matplotlib" and g.svg is None and g._repr_svg_() is None
    assert isinstance(g.figure, Figure) and g._repr_png_()[:8] == PNG_MAGIC
    assert "CloneBackward0" in g.source  # torchviz's description needs no dot
    assert "matplotlib" in repr(g)


def test_without_dot_side_by_side_draws_two_panels(no_dot, capsys, tmp_path):
    drawn = draw_graph(*toy(False)), draw_graph(*toy(True))
    capsys.readouterr()
    pair = side_by_side(*drawn)
    assert capsys.readouterr().out == ""  # draw_graph already said it
    assert [ax.get_title() for ax in pair.figure.axes] == ["identity = x", "identity = x.clone()"]
    assert png_width(pair.png) <= 1000
    pair.save(tmp_path / "pair.png")
    with pytest.raises(ValueError, match="save it as .png"):
        pair.save(tmp_path / "pair.svg")
    pair = side_by_side(toy(False)[0], toy(True)[0], titles=("a", "b"))  # from tensors it says why, once
    assert capsys.readouterr().out.count("\n") == 1 and len(pair.figure.axes) == 2


def test_a_dot_that_fails_also_falls_back(tmp_path, monkeypatch, capsys):
    if sys.platform.startswith("win"):
        pytest.skip("a shell-script dot needs a POSIX shell")
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'broken plugin' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    g = draw_graph(*toy(False))
    out = capsys.readouterr().out
    assert g.backend == "matplotlib" and "failed" in out and "broken plugin" in out and out.count("\n") == 1


def test_a_dot_that_cannot_run_falls_back(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(graphs, "dot_available", lambda: True)
    monkeypatch.setenv("PATH", str(tmp_path))  # which() said yes, but nothing runs
    assert draw_graph(*toy(False)).backend == "matplotlib"
    assert "could not be run" in capsys.readouterr().out


def test_without_torchviz_it_falls_back(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torchviz", None)  # import now raises ImportError
    g = draw_graph(*toy(False))
    assert g.backend == "matplotlib" and g.digraph is None and g.source is None
    assert "torchviz" in capsys.readouterr().out
    with pytest.raises(ValueError, match="no DOT text"):
        g.boxes()
    assert side_by_side(g, toy(True)[0]).backend == "matplotlib"


def test_dot_available_follows_path(no_dot):
    assert dot_available() is False


@pytest.mark.parametrize("platform, command", [
    ("colab", "apt-get install -y graphviz"), ("conda", "conda install -c conda-forge graphviz"),
    ("debian", "sudo apt-get install graphviz"), ("macos", "brew install graphviz"),
    ("windows", "winget install graphviz"), ("linux", "package manager"),
])
def test_install_hint_per_platform(platform, command):
    hint = install_hint(platform)
    assert command in hint and "\n" not in hint


def test_install_hint_detects_this_platform(monkeypatch, tmp_path):
    monkeypatch.setattr(_fallback.sys, "prefix", "/nowhere")
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.setattr(_fallback.sys, "platform", "darwin")
    assert "brew" in install_hint()
    monkeypatch.setattr(_fallback.sys, "platform", "win32")
    assert "winget" in install_hint() and "choco" in install_hint()
    (tmp_path / "conda-meta").mkdir()
    monkeypatch.setattr(_fallback.sys, "prefix", str(tmp_path))
    assert "conda-forge" in install_hint()
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert "Colab" in install_hint()


# ---------------------------------------------------------------- the fallback drawing


def node_boxes(fig: Figure) -> list[FancyBboxPatch]:
    return [p for ax in fig.axes for p in ax.patches if isinstance(p, FancyBboxPatch)]


def test_draw_fallback_draws_torchvizs_nodes_and_edges(tmp_path):
    loss, params = toy(clone=False)
    fig = draw_fallback(loss, params)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert len(node_boxes(fig)) == 10  # 7 backward nodes, 2 leaves, the output
    assert len([p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]) == 10
    texts = collections.Counter(t.get_text() for t in fig.axes[0].texts)
    assert {"weight1\n(1)", "weight2\n(1)", "(1)", *TOY_FUNCTIONS} <= set(texts)
    assert collections.Counter({k: n for k, n in texts.items() if k in TOY_FUNCTIONS}) == graph_nodes(loss)
    assert fig.axes[0].get_title() == "autograd graph (matplotlib drawing)"
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][:2] == ["backward function",
                                                                                 "leaf tensor (gets .grad)"]
    assert not plt.fignum_exists(fig.number)  # closed: shows once, as the cell value
    fig.savefig(tmp_path / "toy.png")


def test_draw_fallback_show_saved_adds_orange_boxes():
    loss, params = toy(clone=False)
    fig = draw_fallback(loss, params, show_saved=True)
    assert sum(box.get_facecolor()[:3] == matplotlib.colors.to_rgb("orange") for box in node_boxes(fig)) == 3


def test_draw_fallback_into_given_axes():
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 5))
    try:
        assert draw_fallback(toy(True)[0], ax=a2, title="clone") is fig
        assert a2.get_title() == "clone" and len(a2.patches) > 10 and len(a1.patches) == 0
    finally:
        plt.close(fig)


@pytest.mark.parametrize("make", [lambda: toy(False), lambda: toy(True), block_output])
@pytest.mark.parametrize("show_saved", [False, True])
def test_the_fallback_draws_the_boxes_torchviz_draws(make, show_saved):
    output, params = make()
    boxes, _, _ = _fallback.boxes_and_edges(output, params, show_saved)
    ours = sorted(label for label, _ in boxes.values())
    digraph = graphs._make_digraph(output, params, show_saved)
    theirs = sorted(" ".join(label.split()).replace(" (", "\n(") for label, _ in
                    GraphDrawing((), digraph, None, None, None).boxes())
    if show_saved:  # a leaf that is also saved is one box in both; torchviz names it by its last declaration
        ours, theirs = sorted(o.split("\n")[-1] for o in ours), sorted(t.split("\n")[-1] for t in theirs)
    assert ours == theirs


def assert_clean(boxes, edges) -> None:
    """No two boxes overlap, and every arrow runs down, toward the output."""
    pos, size, *_ = _fallback.placement(boxes, edges)
    keys = list(boxes)
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            assert (abs(pos[a][0] - pos[b][0]) >= (size[a][0] + size[b][0]) / 2 - 1e-9
                    or abs(pos[a][1] - pos[b][1]) >= (size[a][1] + size[b][1]) / 2 - 1e-9)
    assert all(pos[a][1] > pos[b][1] for a, b, style in edges if style == "arrow")


def test_fallback_layout_of_a_resnet_block_is_clean(tmp_path):
    output, params = block_output()
    boxes, edges, _ = _fallback.boxes_and_edges(output, params, True)
    assert 25 <= len(boxes) <= 60
    assert_clean(boxes, edges)
    fig = draw_fallback(output, params)
    assert fig.get_size_inches()[0] <= 10.0 + 1e-9
    fig.savefig(tmp_path / "block.png")


UNARY = [torch.sin, torch.exp, lambda t: t * 2, lambda t: t.clone(), torch.relu, lambda t: t[:1].expand(3)]
BINARY = [torch.add, torch.mul, torch.sub]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 5), st.integers(0, 30), st.integers(0, 30)),
                min_size=1, max_size=14), st.booleans())
def test_fallback_layout_is_clean_for_random_graphs(steps, show_saved):
    pool = [torch.randn(3, requires_grad=True) for _ in range(2)]  # random DAGs over a growing pool of tensors
    for kind, op, i, j in steps:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        pool.append(UNARY[op % len(UNARY)](a) if kind == 0 else BINARY[op % 3](a, b))
    out = sum(pool[2:], pool[-1]).sum()
    boxes, edges, _ = _fallback.boxes_and_edges(out, {}, show_saved)
    assert_clean(boxes, edges)
    assert sum(kind == "function" for _, kind in boxes.values()) == sum(graph_nodes(out).values())


# ---------------------------------------------------------------- argument errors


def test_output_must_be_a_tensor_with_a_graph():
    with torch.no_grad():
        made_without_graph = torch.ones(2, requires_grad=True) * 2
    for fn in (draw_graph, draw_fallback, graph_nodes, backward_nodes):
        with pytest.raises(TypeError, match="output must be a torch.Tensor"):
            fn("loss")
        with pytest.raises(ValueError, match="output has no grad_fn.*leaf"):
            fn(torch.ones(2, requires_grad=True))
        with pytest.raises(ValueError, match="no_grad"):
            fn(made_without_graph)


@pytest.mark.parametrize("params, match", [
    ([("w", torch.ones(1))], r"params must be a non-empty dict of str name -> tensor.*got \[\('w'"),
    ({"w": 1.0}, r"params\['w'\] must be a torch.Tensor, got float"),
    ({1: torch.ones(1)}, "params must be a non-empty dict of str name -> tensor.*got {1: "),
    (np.array([1.0, 2.0]), "params must be a non-empty dict of str name -> tensor"),   # not a truth-value error
])
def test_params_are_checked(params, match):
    loss, _ = toy(False)
    for fn in (draw_graph, draw_fallback):
        with pytest.raises(TypeError, match=match):
            fn(loss, params)


def test_flags_and_mark_are_checked():
    loss, _ = toy(False)
    y = torch.ones(2, requires_grad=True).sigmoid()
    for call, error, match in [
        (lambda: draw_graph(loss, show_saved="yes"), TypeError, "show_saved must be True or False"),
        (lambda: draw_graph(loss, show_attrs=1), TypeError, "show_attrs must be True or False"),
        (lambda: draw_graph(y, mark=y), ValueError, "show_saved=True"),
        (lambda: draw_graph(y, show_saved=True, mark=[1.0]), TypeError, "mark must be a tensor"),
    ]:
        with pytest.raises(error, match=match):
            call()


def test_side_by_side_arguments_are_checked(tmp_path):
    loss, _ = toy(False)
    with pytest.raises(TypeError, match="g1 must be a torch.Tensor"):
        side_by_side(3, loss)
    with pytest.raises(ValueError, match="g2 has no grad_fn"):
        side_by_side(loss, torch.ones(1))
    pair = side_by_side(loss, toy(True)[0])
    with pytest.raises(TypeError, match="g1 must be a draw_graph.. result or an output tensor, not a pair"):
        side_by_side(pair, loss)
    with pytest.raises(TypeError, match="path must be a str"):
        pair.save(3)


def test_importing_graphs_does_not_import_heavy_modules():
    code = ("import sys, clonelab.graphs; "
            "print(any(m in sys.modules for m in ('matplotlib', 'torchviz', 'graphviz')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "MPLBACKEND": "Agg"})
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("identity", ["alias", "clone"])
def test_no_fallback_edge_runs_through_a_box(identity):
    """Notebook 06's fallback drawing of the post's model with its saved tensors: an edge that skips layers bends
    around the boxes between its ends, so no arrow seems to start or end at a box it passes."""
    from clonelab import toy_residual

    run = toy_residual(identity, backward=False)
    boxes, edges, _ = _fallback.boxes_and_edges(run.loss, {"weight1": run.weight1, "weight2": run.weight2}, True)
    pos, size, row, _, _ = _fallback.placement(boxes, edges)
    skips = 0
    for a, b, _ in edges:
        ends, rad = _fallback.route(a, b, pos, size, row)
        skips += rad != 0
        assert _fallback.crossed(ends, rad, a, b, pos, size) == [], (boxes[a][0], boxes[b][0])
    assert skips >= 1          # the skip connection itself bends


def test_route_bends_a_skipping_edge_away_from_a_box_in_its_way():
    pos = {1: (0.0, 3.0), 2: (0.0, 0.0), 3: (-0.15, 1.5)}          # 3 sits left of the straight line from 1 to 2
    size = dict.fromkeys(pos, (0.6, 0.3))
    ends, rad = _fallback.route(1, 2, pos, size, row=1.0)
    assert _fallback.crossed(ends, 0.0, 1, 2, pos, size) == [3]    # straight: through box 3
    assert rad != 0 and _fallback.crossed(ends, rad, 1, 2, pos, size) == []
