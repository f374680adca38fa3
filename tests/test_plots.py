"""Tests for the pictures: clonelab.storage_diagram and clonelab.plots."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")  # before pyplot is imported anywhere: no windows in tests

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from clonelab import format_bytes  # noqa: E402
from clonelab.plots import plot_history, plot_memory_comparison  # noqa: E402
from clonelab.storage_diagram import _storage_layout, plot_storage  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def saves_png(fig: Figure, path) -> None:
    fig.savefig(path, dpi=80)
    assert path.read_bytes()[:8] == PNG_MAGIC


def teaching_example() -> dict[str, torch.Tensor]:
    a = torch.arange(6.0)
    b = a
    c = a.view(2, 3)
    d = a[1::2]
    e = a.clone()
    return {"a": a, "b": b, "c": c, "d": d, "e": e}


def gids(fig: Figure, prefix: str) -> list[str]:
    return sorted(p.get_gid() for ax in fig.axes for p in ax.patches
                  if (p.get_gid() or "").startswith(prefix))


# ---------------------------------------------------------------- _storage_layout


def test_storage_layout_of_the_teaching_example():
    lay = _storage_layout(teaching_example())
    # a and b are one object; c and d are other objects on a's storage; e has its own
    assert lay.names == {"a": 0, "b": 0, "c": 1, "d": 2, "e": 3}
    assert [o.names for o in lay.objects] == [("a", "b"), ("c",), ("d",), ("e",)]
    assert [o.storage for o in lay.objects] == [0, 0, 0, 1]
    assert [s.objects for s in lay.storages] == [(0, 1, 2), (3,)]
    a, c, d, e = lay.objects
    assert a.elements == c.elements == e.elements == (0, 1, 2, 3, 4, 5)
    assert d.elements == (1, 3, 5) and d.ranges == ((1, 2), (3, 4), (5, 6))
    assert (c.shape, c.stride, c.storage_offset) == ((2, 3), (3, 1), 0)
    assert (d.shape, d.stride, d.storage_offset) == ((3,), (2,), 1)
    assert lay.storages[0].nbytes == 24 and lay.storages[0].n_cells == 6
    assert lay.storages[0].values == ("0", "1", "2", "3", "4", "5")


def test_strided_views_cover_a_strided_subset():
    x = torch.arange(12.0).view(3, 4)
    lay = _storage_layout({"x": x, "xt": x.t(), "col": x[:, 1], "ex": x[0].expand(2, 4)})
    assert len(lay.storages) == 1
    xt, col, ex = lay.objects[1:]
    assert xt.elements == (0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11)
    assert col.elements == (1, 5, 9)
    assert ex.elements == (0, 1, 2, 3, 0, 1, 2, 3) and ex.ranges == ((0, 4),)


def test_meta_and_empty_storages_are_told_apart():
    # data_ptr() is 0 for all of these, yet they are four different storages
    m1, m2 = torch.empty(4, device="meta"), torch.empty(4, device="meta")
    z1, z2 = torch.empty(0), torch.empty(0)
    lay = _storage_layout({"m1": m1, "m1v": m1[1:], "m2": m2, "z1": z1, "z2": z2})
    assert [o.storage for o in lay.objects] == [0, 0, 1, 2, 3]
    assert lay.storages[0].device == "meta" and lay.storages[0].values is None
    assert lay.objects[3].elements == () and lay.objects[3].ranges == ()


def test_a_dtype_view_cuts_the_storage_into_its_smaller_cells():
    a = torch.arange(3.0)
    lay = _storage_layout({"a": a, "bytes": a.view(torch.uint8)})
    store = lay.storages[0]
    assert store.cell_dtype == torch.uint8 and store.n_cells == 12
    assert lay.objects[0].cells_per_element == 4
    assert lay.objects[0].elements == (0, 4, 8) and lay.objects[0].ranges == ((0, 12),)


def test_big_tensors_get_spans():
    big = torch.zeros(100, 100)
    lay = _storage_layout({"big": big, "cols": big[:, ::2], "t": big.t(), "rows": big[10:20]})
    big_o, cols, t, rows = lay.objects
    assert big_o.elements is None and big_o.exact and big_o.ranges == ((0, 10_000),)
    assert not cols.exact and cols.ranges == ((0, 9_999),)  # strided: only the span
    assert t.exact  # a transpose is dense
    assert rows.elements is not None and rows.ranges == ((1000, 2000),)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 40),
    start=st.integers(0, 39),
    step=st.integers(1, 5),
    rows=st.integers(1, 4),
    transpose=st.booleans(),
)
def test_elements_are_the_storage_positions_of_a_view(n, start, step, rows, transpose):
    # In torch.arange(n) every element's value is its own storage position,
    # so a view's values, in order, must equal the elements the layout lists.
    base = torch.arange(n)
    view = base[min(start, n - 1)::step]
    usable = view.numel() - view.numel() % rows
    view = view[:usable].view(rows, -1) if usable else view[:0]
    if transpose and view.dim() == 2:
        view = view.t()
    obj = _storage_layout({"base": base, "view": view}).objects[1]
    assert obj.elements == tuple(view.reshape(-1).tolist())


# ---------------------------------------------------------------- plot_storage


def test_plot_storage_draws_one_box_per_object_and_one_row_per_storage(tmp_path):
    fig = plot_storage(teaching_example())
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert gids(fig, "object-") == ["object-0", "object-1", "object-2", "object-3"]
    assert gids(fig, "storage-") == ["storage-0", "storage-1"]
    texts = [t.get_text() for t in fig.axes[0].texts]
    for name in "abcde":
        assert texts.count(name) == 1  # each name drawn once
    assert fig._suptitle.get_text() == "names \u2192 tensor objects \u2192 storage"
    assert fig.get_size_inches()[0] <= 10.0
    assert not plt.fignum_exists(fig.number)  # closed: it shows once, as the cell value
    saves_png(fig, tmp_path / "storage.png")


def test_plot_storage_handles_odd_tensors(tmp_path):
    big = torch.zeros(300, 300)
    fig = plot_storage({
        "scalar": torch.tensor(3.5),
        "empty": torch.empty(0),
        "complex": torch.zeros(3, dtype=torch.complex64),
        "meta": torch.empty(50, device="meta"),
        "big": big,
        "cols": big[:, ::3],
        "half": torch.arange(30.0).half()[::2],
    }, title="odd tensors")
    assert gids(fig, "object-") == [f"object-{i}" for i in range(7)]
    assert len(gids(fig, "storage-")) == 6
    assert fig._suptitle.get_text() == "odd tensors"
    saves_png(fig, tmp_path / "odd.png")


def test_a_long_storage_counts_elements_not_bytes_when_dtypes_share_it():
    big = torch.zeros(5000)
    fig = plot_storage({"big": big, "bytes": big.view(torch.uint8)})
    notes = [t.get_text() for t in fig.axes[0].texts if " of " in t.get_text()]
    assert notes == ["5,000 of 5,000 elements", "20,000 of 20,000 elements"]


def test_plot_storage_labels_any_float_value():
    lay = _storage_layout({"x": torch.tensor([math.inf, math.nan, 1e6, 2.5, -0.0])})
    assert lay.storages[0].values == ("inf", "nan", "1e+06", "2.5", "0")
    plot_storage({"x": torch.tensor([math.inf, 1.0])})


def test_plot_storage_arguments_are_checked():
    for bad in ([torch.ones(1)], {}, {1: torch.ones(1)}):
        with pytest.raises(TypeError, match="tensors must be a non-empty dict of str name"):
            plot_storage(bad)
    with pytest.raises(TypeError, match=r"tensors\['a'\] must be a torch.Tensor"):
        plot_storage({"a": [1, 2]})
    with pytest.raises(ValueError, match="layout"):
        plot_storage({"s": torch.eye(2).to_sparse()})


# ---------------------------------------------------------------- plot_history


@dataclasses.dataclass
class FakeHistory:
    """Stands in for clonelab.training.History."""

    step_loss: list[float]
    epoch_loss: list[float]
    train_acc: list[float]
    test_acc: list[float]
    time_s: float
    peak_bytes: int


def fake_history(seed: int) -> FakeHistory:
    g = torch.Generator().manual_seed(seed)
    loss = (2.3 * torch.exp(-torch.arange(120) / 40) + 0.05 * torch.rand(120, generator=g))
    return FakeHistory(loss.tolist(), [1.5, 0.7, 0.3], [0.6, 0.8, 0.9],
                       [0.7, 0.85, 0.93], 1.25, 3 * 2**20)


def test_plot_history_has_two_labelled_panels(tmp_path):
    fig = plot_history({"alias": fake_history(0), "clone": fake_history(0),
                        "relu-first": fake_history(1)})
    loss_ax, acc_ax = fig.axes
    assert loss_ax.get_yscale() == "log"
    assert loss_ax.get_xlabel() == "training step" and "loss" in loss_ax.get_ylabel()
    assert acc_ax.get_xlabel() == "epoch" and acc_ax.get_ylabel() == "test accuracy (%)"
    assert len(loss_ax.lines) == 3 and len(acc_ax.lines) == 3
    assert acc_ax.lines[0].get_ydata()[-1] == pytest.approx(93.0)  # percent, not fraction
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[0] == "alias: 93.0% test, 1.2 s, peak 3 MiB"
    # equal curves must both stay visible: different styles
    assert loss_ax.lines[0].get_linestyle() != loss_ax.lines[1].get_linestyle()
    assert fig._suptitle.get_text() == "Training history"
    assert not plt.fignum_exists(fig.number)
    saves_png(fig, tmp_path / "history.png")


def test_plot_history_leaves_missing_or_odd_extras_out_of_the_legend():
    h = SimpleNamespace(step_loss=[1.0, 0.5], test_acc=[0.5], time_s=math.nan, peak_bytes=None)
    fig = plot_history({"a": h, "b": SimpleNamespace(step_loss=[1.0], test_acc=[0.5], time_s="1s")})
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a: 50.0% test", "b: 50.0% test"]


def test_plot_history_accepts_minimal_stand_ins():
    fig = plot_history({"one": SimpleNamespace(step_loss=np.array([1.0, 0.5]),
                                               test_acc=torch.tensor([0.5]))}, title="t")
    assert len(fig.axes) == 2 and fig._suptitle.get_text() == "t"


@pytest.mark.parametrize("histories, error, match", [
    ([fake_history(0)], TypeError, "histories must be a non-empty dict"),
    ({}, TypeError, "histories must be a non-empty dict"),
    ({1: fake_history(0)}, TypeError, "histories must be a non-empty dict of str name"),
    ({"a": SimpleNamespace(step_loss=[1.0])}, TypeError, r"histories\['a'\]\.test_acc must be a sequence"),
    ({"a": SimpleNamespace(step_loss="1 2", test_acc=[0.5])}, TypeError, r"histories\['a'\]\.step_loss"),
    ({"a": SimpleNamespace(step_loss=[], test_acc=[0.5])}, ValueError, "must not be empty"),
])
def test_plot_history_arguments_are_checked(histories, error, match):
    with pytest.raises(error, match=match):
        plot_history(histories)


# ---------------------------------------------------------------- plot_memory_comparison


def memory_data():
    sizes = [4 * 8**k for k in range(9)] + [400_000_000]  # 4 B .. 400 MB
    rss = [0, 0.7 * 2**20, 0, -0.3 * 2**20, 0, 0, 2**20, 2 * 2**20, 68 * 2**20, 380 * 2**20]
    return sizes, list(sizes), rss


def test_plot_memory_comparison_axes_and_markers(tmp_path):
    fig = plot_memory_comparison(*memory_data())
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "symlog")
    assert "bytes" in ax.get_xlabel() and "bytes" in ax.get_ylabel()
    assert ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("y = x" in s for s in labels)
    assert any("= 0" in s for s in labels) and any("< 0" in s for s in labels)
    fig.canvas.draw()
    ticks = {t.get_text() for t in ax.get_yticklabels()}
    assert {"0", "1 KiB", "1 MiB", "-1 MiB"} <= ticks
    assert {"32 B", "1 KiB", "1 MiB"} <= {t.get_text() for t in ax.get_xticklabels()}
    # the negative RSS delta is drawn below zero, not dropped
    low, _ = ax.get_ylim()
    assert low < -0.3 * 2**20
    assert not plt.fignum_exists(fig.number)
    saves_png(fig, tmp_path / "memory.png")


def test_plot_memory_comparison_takes_arrays_and_a_title():
    sizes = np.array([4.0, 4096.0])
    fig = plot_memory_comparison(sizes, torch.tensor([4, 4096]), [0, 8192], title="T")
    assert fig.axes[0].get_title() == "T"


@pytest.mark.parametrize("args, error, match", [
    (([0, 8], [4, 8], [0, 0]), ValueError, "sizes_bytes must all be finite and >= 1"),
    (([4, 8], [-4, 8], [0, 0]), ValueError, "exact_bytes must all be finite and >= 0"),
    (([4, 8], [4, 8], [0, math.nan]), ValueError, "rss_bytes must all be finite"),
    (("48", [4, 8], [0, 0]), TypeError, "sizes_bytes must be a sequence of numbers"),
    (([4, "8"], [4, 8], [0, 0]), TypeError, "sizes_bytes must be a sequence of numbers"),
    ((4, [4], [0]), TypeError, "sizes_bytes must be a sequence of numbers"),
    (([], [], []), ValueError, "sizes_bytes must not be empty"),
])
def test_plot_memory_comparison_arguments_are_checked(args, error, match):
    with pytest.raises(error, match=match):
        plot_memory_comparison(*args)


# ---------------------------------------------------------------- format_bytes


@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (4, "4 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
    (2**20, "1 MiB"), (-2**20, "-1 MiB"), (400_000_000, "381 MiB"), (2**40, "1 TiB"),
    (2**20 - 1, "1024 KiB"), (1023.5, "1024 B"), (999.7 * 2**20, "1000 MiB"),   # never 1.02e+03
])
def test_format_bytes(n, text):
    assert format_bytes(n) == text


def test_importing_plots_does_not_import_matplotlib():
    import os
    import subprocess
    import sys

    code = "import sys, clonelab.plots; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert out.stdout.strip() == "False"


def test_decision_chart_fits_a_notebook_and_says_one_thing(tmp_path):
    import io

    from matplotlib.patches import FancyBboxPatch

    from clonelab.plots import DECISION_CHART, decision_chart

    fig = decision_chart()
    ax = fig.axes[0]
    assert len([p for p in ax.patches if isinstance(p, FancyBboxPatch)]) == len(DECISION_CHART) == 9
    texts = [t.get_text() for t in ax.texts]
    assert sorted(t for t in texts if t in ("yes", "no")) == ["no"] * 4 + ["yes"] * 4
    outcomes = [body for _, kind, body in DECISION_CHART if kind in ("error", "silent")]
    assert all("make the write out of place" in body.replace("\n", " ") for body in outcomes), "every broken case names the same fix"
    assert all("clone or not" in body for _, kind, body in DECISION_CHART if kind == "error")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")   # as JupyterLab's inline backend does
    width = int.from_bytes(buffer.getvalue()[16:20], "big")
    assert width <= 1000, f"{width} px: wider than a JupyterLab column"


def test_memory_timeline_follows_each_clone_from_allocation_to_free():
    import torch

    from clonelab import measure
    from clonelab import memory_timeline, plot_memory_timeline

    x = torch.ones(1000)
    with measure() as m:
        kept = x.clone()          # alive at the end
        short = x.clone()         # freed two events later
        y = short + short
        del short
    live, spans = memory_timeline(m)
    assert live == [4000, 8000, 12000, 8000]
    assert spans == [(0, 3), (1, 2)]
    assert len(plot_memory_timeline({"run": m}).axes) == 2
    del kept, y


def test_plot_memory_timeline_names_a_bad_argument():
    import pytest

    from clonelab import plot_memory_timeline

    with pytest.raises(TypeError, match="reports must be a non-empty dict"):
        plot_memory_timeline({})


def test_plot_versions_colours_the_names_that_saw_a_write():
    import torch

    from clonelab import plot_versions, version_snapshot

    x = torch.zeros(3)
    alias, copy = x, x.clone()
    names = {"x": x, "alias": alias, "copy": copy}
    shots = [version_snapshot(names, "start")]
    x.add_(1)
    shots.append(version_snapshot(names, "x.add_(1)"))
    assert [v for _, v, _ in shots[1].rows] == [1, 1, 0]
    fig = plot_versions(shots)
    colours = [p.get_facecolor()[:3] for p in fig.axes[0].patches]
    orange = colours[3]                            # column 1, row 0: x after the write
    assert colours[4] == orange and colours[5] != orange and colours[0] != orange


def test_version_snapshot_names_bad_input():
    import pytest
    import torch

    from clonelab import version_snapshot

    with pytest.raises(TypeError, match="tensors\\['a'\\]"):
        version_snapshot({"a": [1, 2]}, "start")
    with torch.inference_mode():
        inference = torch.zeros(2)
    assert version_snapshot({"i": inference}, "start").rows == (("i", None, (0.0, 0.0)),)  # it has no counter
