"""Tests for clonelab.graphs: torchviz drawings, the matplotlib fallback, side_by_side."""

from __future__ import annotations

import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported anywhere: no windows in tests

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

from clonelab import graphs  # noqa: E402
from clonelab.graphs import (  # noqa: E402
    GraphDrawing,
    SideBySide,
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
SVG = "{http://www.w3.org/2000/svg}"
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
        self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                        nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = self.downsample(x)
        out += identity
        return self.relu(out)


@pytest.fixture
def no_dot(tmp_path, monkeypatch):
    """PATH holds only an empty folder, so `dot` cannot be found."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert not dot_available()


def svg_text(svg: str) -> str:
    root = ET.fromstring(svg)
    return "\n".join(t for el in root.iter() for t in (el.text or "",))


# ---------------------------------------------------------------- graph_nodes


def test_graph_nodes_of_the_toy_model():
    loss, _ = toy(clone=False)
    assert graph_nodes(loss) == collections.Counter(
        {"MulBackward0": 2, "AccumulateGrad": 2, "AddBackward0": 1,
         "PowBackward0": 1, "SubBackward0": 1})


def test_alias_and_clone_differ_by_exactly_one_clone_node():
    alias, clone = graph_nodes(toy(False)[0]), graph_nodes(toy(True)[0])
    assert clone - alias == collections.Counter({"CloneBackward0": 1})
    assert alias - clone == collections.Counter()


def test_graph_nodes_counts_a_shared_node_once():
    w = torch.ones(2, requires_grad=True)
    y = w * 2
    assert graph_nodes(y + y) == collections.Counter(
        {"AddBackward0": 1, "MulBackward0": 1, "AccumulateGrad": 1})


# ---------------------------------------------------------------- draw_graph


@needs_dot
@pytest.mark.parametrize("clone", [False, True])
def test_draw_graph_svg_names_every_node(clone):
    loss, params = toy(clone)
    g = draw_graph(loss, params)
    assert isinstance(g, GraphDrawing)
    assert g.backend == "graphviz" and g.figure is None
    assert g._repr_svg_() == g.svg
    # the PNG is what JupyterLab shows for a notebook it does not trust
    assert g._repr_png_() == g.png and g.png[:8] == PNG_MAGIC
    text = svg_text(g.svg)  # also proves the SVG is well-formed XML
    for name in TOY_FUNCTIONS + ["weight1", "weight2"]:
        assert name in text
    assert ("CloneBackward0" in text) is clone
    assert "CloneBackward0" in g.source if clone else "CloneBackward0" not in g.source


@needs_dot
def test_draw_graph_output_is_the_same_on_every_run():
    # torchviz names nodes by id(); draw_graph renumbers them, so executed
    # notebooks do not change from one run to the next
    first, second = draw_graph(*toy(True)), draw_graph(*toy(True))
    assert first.svg == second.svg
    assert not re.search(r"\d{7,}", first.source)


@needs_dot
def test_show_saved_adds_the_saved_tensors():
    loss, params = toy(clone=False)
    plain = draw_graph(loss, params)
    saved = draw_graph(loss, params, show_saved=True)
    assert "orange" in saved.source and "orange" not in plain.source
    text = svg_text(saved.svg)
    assert "self" in text and "other" in text  # PowBackward0 saves self, MulBackward0 other


@needs_dot
def test_show_attrs_adds_the_non_tensor_attributes():
    loss, _ = toy(clone=False)
    assert "exponent" in draw_graph(loss, show_attrs=True).source
    assert "exponent" not in draw_graph(loss).source


def test_show_saved_after_backward_explains_what_to_do():
    loss, params = toy(clone=False)
    loss.backward()
    with pytest.raises(ValueError, match="retain_graph=True"):
        draw_graph(loss, params, show_saved=True)
    with pytest.raises(ValueError, match="retain_graph=True"):
        draw_fallback(loss, params, show_saved=True)
    assert isinstance(draw_graph(loss, params), GraphDrawing)  # without saved it still works


def test_repr_names_the_backend():
    g = draw_graph(toy(True)[0])
    assert "PowBackward0" in repr(g) and g.backend in repr(g)


# ---------------------------------------------------------------- no dot


def test_without_dot_draw_graph_prints_one_line_and_falls_back(no_dot, capsys, tmp_path):
    loss, params = toy(clone=True)
    g = draw_graph(loss, params)  # must not raise
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert "`dot`" in out and "not found" in out and "matplotlib" in out
    assert install_hint() in out
    assert g.backend == "matplotlib" and g.svg is None and g._repr_svg_() is None
    assert isinstance(g.figure, Figure)
    assert g.png is None
    assert g._repr_png_()[:8] == PNG_MAGIC
    assert "CloneBackward0" in g.source  # torchviz's description needs no dot
    g.figure.savefig(tmp_path / "fallback.png")
    assert (tmp_path / "fallback.png").stat().st_size > 1000


def test_without_dot_side_by_side_falls_back_too(no_dot, capsys, tmp_path):
    ga, gc = draw_graph(*toy(False)), draw_graph(*toy(True))
    capsys.readouterr()
    fig = side_by_side(ga, gc)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert [ax.get_title() for ax in fig.axes] == ["identity = x", "identity = x.clone()"]
    assert capsys.readouterr().out == ""  # draw_graph already said it
    fig.savefig(tmp_path / "pair.png")
    # from bare tensors or a Digraph it says why, once, and still draws
    import torchviz

    fig = side_by_side(torchviz.make_dot(toy(False)[0]), toy(True)[0], titles=("a", "b"))
    assert capsys.readouterr().out.count("\n") == 1
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    fig.savefig(tmp_path / "pair2.png")


def test_a_dot_that_fails_also_falls_back(tmp_path, monkeypatch, capsys):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dot"
    fake.write_text("#!/bin/sh\necho 'broken plugin' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    if sys.platform.startswith("win"):
        pytest.skip("a shell-script dot needs a POSIX shell")
    g = draw_graph(*toy(False))
    out = capsys.readouterr().out
    assert g.backend == "matplotlib"
    assert "failed" in out and "broken plugin" in out and out.count("\n") == 1


def test_a_dot_that_cannot_run_falls_back(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(graphs, "dot_available", lambda: True)
    monkeypatch.setenv("PATH", str(tmp_path))  # which() said yes, but nothing runs
    g = draw_graph(*toy(False))
    assert g.backend == "matplotlib"
    assert "could not be run" in capsys.readouterr().out


def test_without_torchviz_it_falls_back(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torchviz", None)  # import now raises ImportError
    g = draw_graph(*toy(False))
    assert g.backend == "matplotlib" and g.digraph is None and g.source is None
    assert "torchviz" in capsys.readouterr().out


# ---------------------------------------------------------------- install hints


def test_dot_available_follows_path(no_dot):
    assert dot_available() is False


@pytest.mark.parametrize("platform, command", [
    ("colab", "apt-get install -y graphviz"),
    ("conda", "conda install -c conda-forge graphviz"),
    ("debian", "sudo apt-get install graphviz"),
    ("macos", "brew install graphviz"),
    ("windows", "winget install graphviz"),
    ("linux", "package manager"),
])
def test_install_hint_per_platform(platform, command):
    hint = install_hint(platform)
    assert command in hint and "\n" not in hint


def test_install_hint_detects_this_platform(monkeypatch):
    monkeypatch.setattr(graphs.sys, "prefix", "/nowhere")
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.setattr(graphs.sys, "platform", "darwin")
    assert "brew" in install_hint()
    monkeypatch.setattr(graphs.sys, "platform", "win32")
    assert "winget" in install_hint() and "choco" in install_hint()
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert "Colab" in install_hint()


def test_install_hint_detects_conda(monkeypatch, tmp_path):
    (tmp_path / "conda-meta").mkdir()
    monkeypatch.setattr(graphs.sys, "prefix", str(tmp_path))
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert "conda-forge" in install_hint()


# ---------------------------------------------------------------- the fallback drawing


def node_boxes(fig: Figure) -> list[FancyBboxPatch]:
    return [p for ax in fig.axes for p in ax.patches if isinstance(p, FancyBboxPatch)]


def test_draw_fallback_draws_torchvizs_nodes_and_edges(tmp_path):
    loss, params = toy(clone=False)
    fig = draw_fallback(loss, params)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    # 7 backward nodes + 2 leaves + the output tensor
    assert len(node_boxes(fig)) == 10
    arrows = [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 10
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert {"weight1\n(1)", "weight2\n(1)", "(1)", *TOY_FUNCTIONS} <= texts
    assert fig.axes[0].get_title() == "autograd graph (matplotlib drawing)"
    assert not plt.fignum_exists(fig.number)  # closed: shows once, as the cell value
    fig.savefig(tmp_path / "toy.png")


def test_draw_fallback_show_saved_adds_orange_nodes():
    loss, params = toy(clone=False)
    assert len(node_boxes(draw_fallback(loss, params, show_saved=True))) > 10


def test_draw_fallback_into_given_axes():
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 5))
    try:
        out = draw_fallback(toy(True)[0], ax=a2, title="clone")
        assert out is fig and a2.get_title() == "clone" and len(a2.patches) > 10
        assert len(a1.patches) == 0
    finally:
        plt.close(fig)


def test_fallback_layout_of_a_resnet_block_is_clean(tmp_path):
    torch.manual_seed(0)
    block = Block()
    x = torch.randn(2, 4, 8, 8, requires_grad=True)
    y = block(x)
    params = {**dict(block.named_parameters()), "x": x}
    graph = graphs._walk(y, params)
    layout = graphs._layout(graph)
    assert 25 <= len(graph.nodes) <= 45
    assert_clean(layout)
    fig = draw_fallback(y, params)
    assert len(node_boxes(fig)) == len(graph.nodes)
    assert fig.get_size_inches()[0] <= 10.0 + 1e-9
    fig.savefig(tmp_path / "block.png")


def assert_clean(layout) -> None:
    """No two node boxes overlap, and every arrow runs down, toward the output."""
    boxes = [(layout.pos[k], layout.size[k]) for k in layout.graph.nodes]
    for i, ((x1, y1), (w1, h1)) in enumerate(boxes):
        for (x2, y2), (w2, h2) in boxes[i + 1:]:
            apart = abs(x1 - x2) >= (w1 + w2) / 2 - 1e-9 or abs(y1 - y2) >= (h1 + h2) / 2 - 1e-9
            assert apart
    for points, style in layout.routes:
        ys = [y for _, y in points]
        if style == "saved":  # no arrowhead: either end may be the upper one
            ys = ys if ys[0] > ys[-1] else ys[::-1]
        assert all(a > b for a, b in zip(ys, ys[1:])), points


UNARY = [torch.sin, torch.exp, lambda t: t * 2, lambda t: t.clone(), torch.relu,
         lambda t: t[:1].expand(3)]
BINARY = [torch.add, torch.mul, torch.sub]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 5), st.integers(0, 30),
                          st.integers(0, 30)), min_size=1, max_size=14), st.booleans())
def test_fallback_layout_is_clean_for_random_graphs(steps, show_saved):
    # random DAGs of unary and binary ops over a growing pool of tensors
    pool = [torch.randn(3, requires_grad=True) for _ in range(2)]
    for kind, op, i, j in steps:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        pool.append(UNARY[op % len(UNARY)](a) if kind == 0 else BINARY[op % 3](a, b))
    out = sum(pool[2:], pool[-1]).sum()
    graph = graphs._walk(out, {}, show_saved)
    assert_clean(graphs._layout(graph))
    assert sum(graph_nodes(out).values()) == sum(
        1 for n in graph.nodes.values() if n.kind == "function")


# ---------------------------------------------------------------- side_by_side


@needs_dot
def test_side_by_side_composes_one_valid_svg(tmp_path):
    pic = side_by_side(draw_graph(*toy(False)), draw_graph(*toy(True)))
    assert isinstance(pic, SideBySide)
    root = ET.fromstring(pic._repr_svg_())
    assert root.tag == f"{SVG}svg"
    titles = [t.text for t in root.iter(f"{SVG}text") if t.get("font-weight") == "bold"]
    assert titles == ["identity = x", "identity = x.clone()"]
    panels = root.findall(f"{SVG}svg")
    assert len(panels) == 2
    # the left panel sits left of the right one, and both keep their drawing
    assert float(panels[0].get("x")) < float(panels[1].get("x"))
    assert "CloneBackward0" in svg_text(ET.tostring(panels[1], encoding="unicode"))
    assert "CloneBackward0" not in svg_text(ET.tostring(panels[0], encoding="unicode"))
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert len(ids) == len(set(ids))
    pic.save(tmp_path / "pair.svg")
    assert ET.parse(tmp_path / "pair.svg").getroot().tag == f"{SVG}svg"


@needs_dot
def test_side_by_side_png_has_the_same_frame_as_the_svg(tmp_path):
    from PIL import Image

    pic = side_by_side(draw_graph(*toy(False)), draw_graph(*toy(True)))
    assert pic._repr_png_() == pic.png and pic.png[:8] == PNG_MAGIC
    pic.save(tmp_path / "pair.png")
    with Image.open(tmp_path / "pair.png") as im:
        width, height = im.size
    root = ET.fromstring(pic.svg)
    w_pt, h_pt = (float(root.get(k).removesuffix("pt")) for k in ("width", "height"))
    # dot draws PNGs at 96 dpi, i.e. 4/3 pixels per point
    assert width == pytest.approx(w_pt * 4 / 3, rel=0.03)
    assert height == pytest.approx(h_pt * 4 / 3, rel=0.03)
    with pytest.raises(TypeError, match="path must be a str"):
        pic.save(3)
    with pytest.raises(ValueError, match="no PNG"):
        SideBySide(pic.svg, None).save(tmp_path / "x.png")


@needs_dot
def test_side_by_side_takes_tensors_and_digraphs():
    import torchviz

    pic = side_by_side(toy(False)[0], torchviz.make_dot(toy(True)[0]), titles=("alias", "clone"))
    assert isinstance(pic, SideBySide)
    text = svg_text(pic.svg)
    assert "alias" in text and "clone" in text and "CloneBackward0" in text


@needs_dot
def test_side_by_side_with_a_fallback_redraws_both(monkeypatch):
    alias = draw_graph(*toy(False))
    monkeypatch.setenv("PATH", "")
    clone = draw_graph(*toy(True))
    fig = side_by_side(alias, clone)
    assert isinstance(fig, Figure) and len(fig.axes) == 2


# ---------------------------------------------------------------- argument errors


def test_output_must_be_a_tensor_with_a_graph():
    with pytest.raises(TypeError, match="output must be a torch.Tensor"):
        draw_graph([1.0])
    with pytest.raises(ValueError, match="leaf"):
        draw_graph(torch.ones(2, requires_grad=True))
    with torch.no_grad():
        made_without_graph = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(ValueError, match="no_grad"):
        draw_graph(made_without_graph)
    for fn in (graph_nodes, draw_fallback):
        with pytest.raises(TypeError, match="output"):
            fn("loss")
        with pytest.raises(ValueError, match="requires_grad"):
            fn(torch.ones(2))


@pytest.mark.parametrize("params, error, match", [
    ([("w", torch.ones(1))], TypeError, "params must be None or a dict"),
    ({"w": 1.0}, TypeError, r"params\['w'\] must be a torch.Tensor"),
    ({1: torch.ones(1)}, TypeError, "params keys must be str"),
])
def test_params_are_checked(params, error, match):
    loss, _ = toy(False)
    with pytest.raises(error, match=match):
        draw_graph(loss, params)
    with pytest.raises(error, match=match):
        draw_fallback(loss, params)


def test_flags_titles_and_axes_are_checked():
    loss, _ = toy(False)
    with pytest.raises(TypeError, match="show_saved must be True or False"):
        draw_graph(loss, show_saved="yes")
    with pytest.raises(TypeError, match="show_attrs must be True or False"):
        draw_graph(loss, show_attrs=1)
    with pytest.raises(TypeError, match="ax must be None or a matplotlib Axes"):
        draw_fallback(loss, ax="left")
    with pytest.raises(TypeError, match="title must be None or a str"):
        draw_fallback(loss, title=5)
    with pytest.raises(TypeError, match="show_saved"):
        draw_fallback(loss, show_saved=None)


def test_side_by_side_arguments_are_checked():
    loss, _ = toy(False)
    with pytest.raises(TypeError, match="g1 must be a draw_graph"):
        side_by_side(3, loss)
    with pytest.raises(TypeError, match="g2 must be a draw_graph"):
        side_by_side(loss, "graph")
    with pytest.raises(ValueError, match="g2 has no grad_fn"):
        side_by_side(loss, torch.ones(1))
    with pytest.raises(TypeError, match="titles must be a pair of str"):
        side_by_side(loss, loss, titles="ab")
    with pytest.raises(ValueError, match="exactly 2"):
        side_by_side(loss, loss, titles=("a", "b", "c"))
    with pytest.raises(TypeError, match="titles must be str"):
        side_by_side(loss, loss, titles=("a", 2))


def test_install_hint_argument_is_checked():
    with pytest.raises(ValueError, match="platform must be one of"):
        install_hint("beos")
    with pytest.raises(TypeError, match="platform must be None or a str"):
        install_hint(3)


def test_importing_graphs_does_not_import_heavy_modules():
    code = ("import sys, clonelab.graphs; "
            "print(any(m in sys.modules for m in ('matplotlib', 'torchviz', 'graphviz')))")
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert out.stdout.strip() == "False"


def torchviz_node_labels(output, params, show_saved) -> list[str]:
    """The node labels in torchviz's DOT source (the last definition of a node wins)."""
    digraph = graphs._make_digraph(output, params, show_saved, False)
    labels: dict[str, str] = {}
    pattern = r'\t(n\d+) \[label=(?:"(.*?)"|(\w+))(?: fillcolor=\w+)?\]'
    for match in re.finditer(pattern, "".join(digraph.body), flags=re.DOTALL):
        labels[match.group(1)] = match.group(2) if match.group(2) is not None else match.group(3)
    # torchviz writes "name\n (shape)"; ours is "name\n(shape)"
    return sorted(label.replace("\n ", "\n").strip() for label in labels.values())


def view_output():
    w = torch.ones(4, requires_grad=True)
    return (w * 2)[1:3], {"w": w}


def block_output():
    torch.manual_seed(0)
    block = Block()
    x = torch.randn(2, 4, 8, 8, requires_grad=True)
    return block(x), {**dict(block.named_parameters()), "x": x}


@pytest.mark.parametrize("make", [lambda: toy(False), lambda: toy(True), view_output,
                                  block_output])
@pytest.mark.parametrize("show_saved", [False, True])
def test_the_walk_finds_the_nodes_torchviz_draws(make, show_saved):
    output, params = make()
    graph = graphs._walk(output, params, show_saved)
    ours = sorted(node.label.strip() for node in graph.nodes.values())
    theirs = torchviz_node_labels(output, params, show_saved)
    if not show_saved:
        assert ours == theirs
    else:
        # A leaf that is also saved (x, saved by two convolutions) is one node
        # in both, but torchviz names it by whichever definition came last.
        def shapes(labels):
            return sorted(label.split("\n")[-1] for label in labels)
        assert shapes(ours) == shapes(theirs)


@needs_dot
def test_mark_colours_every_saved_copy_of_the_tensor_about_to_be_written():
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    y = x.sigmoid()                     # sigmoid saves its output y ...
    z = (y * w).sum()                   # ... and the mul saves y too, for w's gradient
    g = draw_graph(z, {"x": x, "w": w}, show_saved=True, mark=y)
    assert g.source.count("fillcolor=tomato") == 2
    unmarked = draw_graph(z, {"x": x, "w": w}, show_saved=True, mark=torch.zeros(3))
    assert "tomato" not in unmarked.source


def test_mark_needs_show_saved_and_a_tensor():
    x = torch.ones(2, requires_grad=True)
    y = x.sigmoid()
    with pytest.raises(ValueError, match="show_saved=True"):
        draw_graph(y, mark=y)
    with pytest.raises(TypeError, match="mark must be a tensor"):
        draw_graph(y, show_saved=True, mark=[1.0])


# ---------------------------------------------------------------- boxes() and arrows()


@pytest.mark.parametrize("clone", [False, True])
def test_boxes_and_arrows_read_the_toy_graph(clone):
    loss, params = toy(clone)
    g = draw_graph(loss, params) if dot_available() else None
    if g is None:  # without dot the DOT text is still there: build it the same way
        g = GraphDrawing(loss, params, False, False, graphs._make_digraph(loss, params, False, False),
                         None, None, None)
    colours = collections.Counter(colour for _, colour in g.boxes())
    assert colours == {"grey": 7 + clone, "lightblue": 2, "darkolivegreen1": 1}
    assert sum(colours[c] for c in ("grey",)) == sum(graph_nodes(loss).values())
    arrows = g.arrows()
    assert ("weight1 (1)", "AccumulateGrad", "arrow") in arrows
    assert ("PowBackward0", "(1)", "arrow") in arrows
    assert all(style == "arrow" for _, _, style in arrows)
    assert (("MulBackward0", "CloneBackward0", "arrow") in arrows) is clone


def test_boxes_and_arrows_read_saved_tensors_marks_and_views():
    loss, params = toy(clone=False)
    g = GraphDrawing(loss, params, True, False, graphs._make_digraph(loss, params, True, False),
                     None, None, None)
    boxes = g.boxes()
    # the later declaration wins: w2, saved as `self`, is drawn as the blue leaf
    assert sorted(label for label, colour in boxes if colour == "orange") == ["other ()", "other (1)", "self (1)"]
    assert ("weight2 (1)", "lightblue") in boxes
    assert ("MulBackward0", "weight2 (1)", "line") in g.arrows()

    w = torch.ones(2, requires_grad=True)
    t = w * 2
    v = t[0:1]
    view = GraphDrawing(v, {"w": w, "t": t, "v": v}, False, False,
                        graphs._make_digraph(v, {"w": w, "t": t, "v": v}, False, False), None, None, None)
    assert ("t (2)", "darkolivegreen3") in view.boxes()
    assert ("t (2)", "v (1)", "dotted") in view.arrows()


def test_mark_recolours_the_saved_box():
    w1 = torch.tensor([2.0], requires_grad=True)
    w2 = torch.tensor([3.0], requires_grad=True)
    f = w1 * 1
    loss = (f + w2 * f) ** 2
    g = GraphDrawing(loss, {}, True, False, graphs._make_digraph(loss, {}, True, False, f), None, None, None)
    assert [label for label, colour in g.boxes() if colour == "tomato"] == ["other (1)"]


def test_boxes_without_torchviz_raise_a_clear_error():
    w = torch.ones(1, requires_grad=True)
    g = GraphDrawing(w * 2, {}, False, False, None, None, None, None)
    with pytest.raises(ValueError, match="no DOT text"):
        g.boxes()


@needs_dot
def test_a_saved_leaf_stays_above_the_node_that_saved_it():
    # Without the fix, w2 (saved by w2 * f, and a leaf) was ranked below its MulBackward0 and the
    # arrow AccumulateGrad -> MulBackward0 pointed up. Read the ranks from dot's layout (y grows down).
    loss, params = toy(clone=False)
    g = draw_graph(loss, params, show_saved=True)
    assert "constraint=false dir=none" in g.source
    layout = g.digraph.pipe(format="plain", encoding="utf-8")
    y, names = {}, {}
    for line in layout.splitlines():
        parts = line.split()
        if parts and parts[0] == "node":
            y[parts[1]] = float(parts[3])
    for box, body in graphs._DOT_NODE.findall(g.source):
        label = dict(graphs._DOT_ATTR.findall(body)).get("label", "")
        names[box] = " ".join(label.strip('"').split())
    for tail, head, attrs in graphs._DOT_EDGE.findall(g.source):
        if "dir=none" not in (attrs or ""):
            assert y[tail] > y[head], f"{names[tail]} -> {names[head]} points up"
