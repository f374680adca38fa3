from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from clonelab import measure, rss_line_profile, saved_by_node, saved_for_backward
from clonelab.memory import rss_bytes


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
    with pytest.raises(ValueError, match="device must be"):
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
    with pytest.raises(TypeError, match="fn must be callable"):
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
    assert "freed" in [r["shape"] for r in saved_by_node(out)]
    with pytest.raises(ValueError, match="no grad_fn"):
        saved_by_node(w)
    with pytest.raises(TypeError, match="output must be a torch.Tensor"):
        saved_by_node(3)


def test_rss_line_profile_reports_the_posts_function():
    from clonelab.workloads import assign_tensor, clone_tensor

    report = rss_line_profile(clone_tensor)
    assert "b = a.clone()" in report and "MiB" in report
    assert "Filename: clonelab/workloads.py" in rss_line_profile(assign_tensor)
    with pytest.raises(ValueError, match="func must be defined in a file"):
        rss_line_profile(len)  # a builtin: no source file to read
    with pytest.raises(TypeError, match="func must be callable"):
        rss_line_profile(3)


def test_rss_is_in_bytes_and_positive():
    assert rss_bytes() > 10 * 2**20
