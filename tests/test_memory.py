from __future__ import annotations

import os

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from clonelab import measure, rss_line_profile, saved_by_node, saved_for_backward
from clonelab.memory import allocation_lifetimes
from clonelab.rss import rss_bytes


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=50_000), st.sampled_from([torch.float32, torch.float64, torch.int8]))
def test_clone_costs_exactly_nbytes_on_cpu(n, dtype):
    x = torch.ones(n, dtype=dtype)
    with measure() as m:
        y = x.clone()
    assert (m.allocated, m.freed, m.peak, m.net) == (x.nbytes, 0, x.nbytes, x.nbytes)
    del y


def test_alias_costs_nothing():
    x = torch.ones(100)
    with measure() as m:
        y = x  # noqa: F841
    assert (m.allocated, m.freed, m.peak) == (0, 0, 0)


def test_temporaries_count_towards_peak_not_net():
    x = torch.ones(1000)
    with measure() as m:
        y = (x * 2).sum()  # x * 2 is a 4000-byte temporary
    assert m.peak >= 4000 and m.net < 4000
    assert any(op == "aten::mul" and b == 4000 for op, b in m.events)
    assert "allocated=" in str(m) and len(m.table()) == len(m.events)
    del y


def test_frees_of_memory_from_before_the_block_are_not_counted_on_cpu():
    x = torch.ones(1000)
    with measure() as m:
        del x
    assert (m.allocated, m.freed) == (0, 0)


def test_measure_arguments():
    with pytest.raises(RuntimeError, match="tpu"):  # torch.device's own message
        measure("tpu")
    with pytest.raises(ValueError, match="device must be"):
        measure("meta")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="needs a CUDA GPU"):
            measure("cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_rounds_small_blocks_to_512_bytes():
    x = torch.ones(1, device="cuda")
    with measure("cuda") as m:
        y = x.clone()
    assert m.allocated == 512 and m.requested == 4 and m.peak == 512
    del y


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_nested_measure_on_cuda_keeps_the_outer_peak():
    with measure("cuda") as outer:
        a = torch.empty(2**20, dtype=torch.uint8, device="cuda")
        del a  # the outer block's peak was here, before the inner block resets the statistic
        with measure("cuda") as inner:
            b = torch.empty(512, dtype=torch.uint8, device="cuda")
    assert (inner.allocated, inner.peak) == (512, 512)
    assert (outer.allocated, outer.peak) == (2**20 + 512, 2**20)
    del b


def test_saved_for_backward_counts_distinct_storages():
    x = torch.randn(10, requires_grad=True)
    assert saved_for_backward(torch.sigmoid, x).nbytes == 40  # its output
    assert saved_for_backward(torch.exp, x).nbytes == 40
    assert saved_for_backward(lambda t: t + 1, x).nbytes == 0
    assert saved_for_backward(lambda t: t.clone(), x).nbytes == 0
    report = saved_for_backward(lambda t: t * t, x)  # saves x twice, one storage
    assert len(report.tensors) == 2 and report.nbytes == 40
    assert report.result.shape == (10,)
    assert "saved tensors" in str(report) and "<table>" in report._repr_html_()
    with pytest.raises(TypeError, match="not callable"):
        saved_for_backward(x)


def test_saved_by_node_names_what_each_node_keeps():
    w = torch.ones(3, requires_grad=True)
    out = torch.relu(w * w) + 1
    rows = [(r["node"], r["saved"]) for r in saved_by_node(out)]
    assert ("AddBackward0", "(nothing)") in rows
    assert ("ReluBackward0", "result") in rows
    assert ("MulBackward0", "self") in rows and ("MulBackward0", "other") in rows
    out.sum().backward()
    assert ("ReluBackward0", "result") in [(r["node"], r["saved"]) for r in saved_by_node(out)]
    assert "freed by backward()" in [r["shape"] for r in saved_by_node(out)]
    with pytest.raises(ValueError, match="no grad_fn"):
        saved_by_node(w)
    with pytest.raises(TypeError, match="output must be a torch.Tensor"):
        saved_by_node(3)


def test_rss_line_profile_reports_the_posts_function():
    from clonelab.workloads import assign_tensor, clone_tensor

    report = rss_line_profile(clone_tensor)
    assert "b = a.clone()" in report and "MiB" in report
    assert "Filename: clonelab/workloads.py" in rss_line_profile(assign_tensor)
    with pytest.raises(TypeError):
        rss_line_profile(len)  # a builtin: no source file to read
    namespace = {}
    exec(compile("def typed_in_a_cell():\n    return 1\n", "<ipython-input-1>", "exec"), namespace)
    with pytest.raises(ValueError, match="func must be defined in a file"):
        rss_line_profile(namespace["typed_in_a_cell"])
    # a function of another file is shown by the file's name, not by a path that climbs out of the package
    import textwrap

    assert rss_line_profile(textwrap.dedent, "  x").startswith("Filename: textwrap.py\n")


def test_rss_increments_reads_every_line_that_ran():
    from clonelab import rss_increments
    from clonelab.workloads import clone_tensor

    rows = rss_increments(rss_line_profile(clone_tensor))
    assert [code for code, _ in rows] == ["a = torch.tensor([1], dtype=torch.float32)",
                                          "a.grad = torch.tensor([2], dtype=torch.float32)",
                                          "b = a.clone()", "return b"]
    # printed with one decimal: every increment is a whole number of 0.1 MiB steps
    assert all(abs(mib * 10 - round(mib * 10)) < 1e-9 for _, mib in rows)
    assert rss_increments("   7    10.0 MiB    -0.5 MiB           1       del x\n") == [("del x", -0.5)]


def test_rss_is_in_bytes_and_positive():
    assert rss_bytes() > 10 * 2**20


def test_saved_by_node_looks_inside_saved_tuples():
    x = torch.randn(5, requires_grad=True)
    idx = torch.tensor([0, 2])
    rows = {(r["node"], r["saved"]): r for r in saved_by_node(x[idx])}
    assert ("IndexBackward0", "indices[0]") in rows  # _saved_indices is a tuple holding idx
    assert rows[("IndexBackward0", "indices[0]")]["bytes"] == idx.nbytes
    assert ("IndexBackward0", "(nothing)") not in rows


def _bytes(n):
    return torch.empty(n, dtype=torch.uint8)  # exactly n bytes


def test_nested_measure_blocks_each_count_their_own_window():
    with measure() as outer:
        a = _bytes(1000)
        with measure() as inner:
            b = _bytes(300)
            del a  # allocated before the inner block: only the outer one sees this free
        assert (inner.allocated, inner.freed, inner.peak) == (300, 0, 300)  # ready when its block ends
        c = _bytes(50)
    assert (inner.allocated, inner.freed) == (300, 0)
    assert (outer.allocated, outer.freed, outer.net) == (1350, 1000, 350)
    assert outer.peak == 1300
    del b, c


def test_cpu_0_is_the_cpu_and_a_measure_can_be_used_twice():
    with measure("cpu") as outer:
        with measure("cpu:0") as inner:
            a = _bytes(100)
    assert (outer.allocated, inner.allocated, inner.device) == (100, 100, "cpu")
    assert [life.nbytes for life in allocation_lifetimes(inner)] == [100]
    meter = measure()
    with meter as first:
        b = _bytes(10)
    with meter as second:
        c = _bytes(20)
    assert (first.allocated, second.allocated) == (10, 20)   # a report each, not one that adds up
    del a, b, c


def test_three_levels_of_nesting_then_a_plain_block():
    with measure() as m1:
        a = _bytes(1)
        with measure() as m2:
            b = _bytes(10)
            with measure() as m3:
                c = _bytes(100)
            d = _bytes(1000)
        e = _bytes(10000)
    assert (m1.allocated, m2.allocated, m3.allocated) == (11111, 1110, 100)
    with measure() as after:  # the shared machinery is left clean
        f = _bytes(7)
    assert (after.allocated, after.freed, after.peak) == (7, 0, 7)
    del a, b, c, d, e, f


def test_measure_filters_what_the_profiler_prints_as_it_starts_and_stops(monkeypatch, capfd):
    import torch.profiler

    probe = b"ERROR:2025-06-01 12:00:00 4242:4242 DeviceProperties.cpp:56] gpuGetDeviceCount failed with code 35\n"
    stage = b"STAGE:2026-12-01 01:58:29 21254:21254 ActivityProfilerController.cpp:314] Completed Stage: Warm Up\n"

    class Noisy(torch.profiler.profile):  # what a CUDA build of torch does on a machine without a GPU
        def start(self):
            os.write(2, probe + stage)
            super().start()

        def stop(self):
            super().stop()
            os.write(2, probe)

    monkeypatch.setattr(torch.profiler, "profile", Noisy)
    capfd.readouterr()
    with measure() as m:
        y = _bytes(5)
        os.write(2, b"a warning from the user's code\n")
    err = capfd.readouterr().err
    assert "gpuGetDeviceCount" not in err and "Warm Up" not in err
    assert err == "a warning from the user's code\n"
    assert m.allocated == 5
    del y


def test_allocation_lifetimes_say_when_each_allocation_is_freed():
    from clonelab import allocation_lifetimes

    x = torch.ones(100)
    with measure() as m:
        a = x.clone()      # 400 B, lives to the end
        b = _bytes(1000)   # freed two events later
        c = _bytes(10)
        del b
    lives = allocation_lifetimes(m)
    assert [(life.root, life.nbytes, life.start, life.end) for life in lives] == [
        ("aten::clone", 400, 0, None), ("aten::empty", 1000, 1, 3), ("aten::empty", 10, 2, None)]
    assert m.peak_at == 2 and m.peak == 1410 == sum(life.nbytes for life in lives if life.start <= 2)
    assert [m.trace[life.start][3] for life in lives] == [400, 1000, 10]
    assert m.trace[3][2:] == (m.trace[1][2], -1000)        # the free has its allocation's address
    del a, c


def test_allocation_lifetimes_of_a_backward_pass():
    from clonelab import allocation_lifetimes

    x = torch.ones(100, requires_grad=True)
    with measure() as m:
        (x.clone() * 2).sum().backward()
    lives = allocation_lifetimes(m)
    assert len(lives) == sum(1 for event in m.trace if event[3] > 0)
    assert any((life.root or "").startswith("autograd::engine") for life in lives)
    clone = next(life for life in lives if life.root == "aten::clone")
    assert clone.nbytes == x.nbytes and clone.end is not None   # freed inside the block


def test_backward_start_is_the_first_event_under_autograds_engine():
    w = torch.ones(64, requires_grad=True)
    with measure() as forward_only:
        y = (w * 2).exp()
    with measure() as both:
        (w * 2).exp().sum().backward()
    assert forward_only.backward_start is None and y.requires_grad
    start = both.backward_start
    assert start is not None and start > 0
    assert all(not (root or "").startswith("autograd::engine") for _, root, _, _ in both.trace[:start])
    assert both.trace[start][1].startswith("autograd::engine")
