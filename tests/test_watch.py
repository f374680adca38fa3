from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from clonelab import watch_ops

DTYPES = [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.uint8, torch.bool]
shapes = st.lists(st.integers(min_value=1, max_value=5), min_size=1, max_size=4)
dtypes = st.sampled_from(DTYPES)


def make(shape, dtype, device="cpu"):
    return torch.zeros(shape, dtype=dtype, device=device)


def test_assignment_records_nothing():
    x = torch.ones(3)
    with watch_ops(x=x) as log:
        y = x  # noqa: F841
    assert len(log) == 0 and log.ops == [] and log.new_bytes == 0
    assert "no ops ran" in str(log)


@settings(max_examples=40, deadline=None)
@given(shapes, dtypes)
def test_clone_is_exactly_nbytes_new(shape, dtype):
    x = make(shape, dtype)
    with watch_ops(x=x) as log:
        x.clone()
    assert log.kinds() == ["NEW"] and log.new_bytes == x.nbytes


@settings(max_examples=40, deadline=None)
@given(shapes, dtypes, st.sampled_from(["view", "slice", "t", "expand", "detach", "unsqueeze"]))
def test_view_ops_report_no_new_bytes(shape, dtype, how):
    x = make(shape, dtype)
    ops = {
        "view": lambda t: t.view(-1),
        "slice": lambda t: t[..., :1],
        "t": lambda t: t.t() if t.dim() <= 2 else t.transpose(0, 1),
        "expand": lambda t: t.unsqueeze(0).expand(3, *t.shape),
        "detach": lambda t: t.detach(),
        "unsqueeze": lambda t: t.unsqueeze(0),
    }
    with watch_ops(x=x) as log:
        ops[how](x)
    assert log.new_bytes == 0
    assert set(log.kinds()) == {"VIEW"}


@settings(max_examples=40, deadline=None)
@given(shapes, st.sampled_from([torch.float32, torch.float64, torch.int64]),
       st.sampled_from(["add_", "iadd", "mul_", "zero_", "fill_", "copy_"]))
def test_inplace_op_bumps_the_version_exactly_once(shape, dtype, how):
    x = make(shape, dtype)
    ops = {
        "add_": lambda t: t.add_(1),
        "iadd": lambda t: t.__iadd__(1),
        "mul_": lambda t: t.mul_(2),
        "zero_": lambda t: t.zero_(),
        "fill_": lambda t: t.fill_(3),
        "copy_": lambda t: t.copy_(torch.ones_like(t)),
    }
    before = x._version
    with watch_ops(x=x) as log:
        ops[how](x)
    writes = [r for r in log if r.kind == "IN-PLACE"]
    assert len(writes) == 1 and writes[0].target == "x"
    assert writes[0].version == (before, before + 1) and x._version == before + 1


@pytest.mark.parametrize("device", ["cpu", "meta"] + (["cuda"] if torch.cuda.is_available() else []))
def test_same_answers_on_every_device(device):
    x = torch.zeros(4, 5, device=device)
    with watch_ops(x=x) as log:
        x.clone()
        x.t()
        x.mul_(2)
        x + 1
    assert log.ops == ["aten.clone", "aten.t", "aten.mul_", "aten.add"]
    assert log.kinds() == ["NEW", "VIEW", "IN-PLACE", "NEW"]
    assert [r.nbytes for r in log] == ([0, 0, 0, 0] if device == "meta" else [80, 0, 0, 80])
    assert log[2].version == (0, 1)


def test_a_watcher_used_twice_gives_a_log_each():
    x = torch.zeros(5)
    watcher = watch_ops(x=x)
    with watcher as first:
        x.clone()
    with watcher as second:
        x.add_(1)
    assert (first.ops, first.new_bytes, second.ops, second.new_bytes) == (["aten.clone"], 20, ["aten.add_"], 0)


def test_meta_tensors_are_new_but_allocate_nothing():
    x = torch.zeros(4, 5, device="meta")
    with watch_ops(x=x) as log:
        x.clone()
    assert log.kinds() == ["NEW"] and log.new_bytes == 0 and log[0].nbytes == 0
    assert "0 bytes (meta, 80 on a real device)" in str(log)


def test_index_assignment_is_a_view_then_an_inplace_write():
    x = torch.zeros(3)
    with watch_ops(x=x) as log:
        x[0] = 5
    # which op writes is the dispatcher's choice (copy_ in torch 2.14, fill_ in 2.15): the test asks what it writes
    assert "aten.select" in log.ops
    assert log[-1].kind == "IN-PLACE" and log[-1].target == "a view of x"
    assert x._version == 1


def test_out_argument_is_an_inplace_write():
    x, out = torch.ones(3), torch.empty(3)
    with watch_ops(x=x, out=out) as log:
        torch.add(x, 1, out=out)
    assert log[0].kind == "IN-PLACE" and log[0].target == "out"


def test_reshape_copies_only_when_it_must():
    x = torch.arange(6.0).view(2, 3)
    with watch_ops(x=x) as log:
        x.reshape(3, 2)
    assert log.kinds() == ["VIEW"]
    xt = x.t()
    with watch_ops(xt=xt) as log:
        xt.reshape(6)
    assert "NEW" in log.kinds() and log.new_bytes == 24


def test_item_is_recorded_as_a_value():
    x = torch.ones(2)
    with watch_ops() as log:
        x.sum().item()
    assert log.kinds() == ["NEW", "VALUE"]


def test_log_renders_as_text_and_html():
    x = torch.ones(2)
    with watch_ops(x=x) as log:
        x.add_(1)
    assert "IN-PLACE" in str(log) and "version 0 → 1" in str(log)
    assert "<table>" in log._repr_html_()


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="x must be a torch.Tensor, got int"):
        watch_ops(x=3)


def test_inplace_ops_that_return_nothing_are_inplace_writes():
    # torch._foreach_mul_ writes into every tensor of its list and returns None;
    # torch.optim uses such ops (foreach=True, the default on CUDA).
    a, b = torch.zeros(3), torch.zeros(2, 2)
    with watch_ops(a=a, b=b) as log:
        torch._foreach_mul_([a, b], 2.0)
    assert log.ops == ["aten._foreach_mul_"]
    assert log.kinds() == ["IN-PLACE", "IN-PLACE"] and log.new_bytes == 0
    assert [r.target for r in log] == ["a", "b"]
    assert [r.version for r in log] == [(0, 1), (0, 1)]
    assert [r.shape for r in log] == [(3,), (2, 2)]
    assert a._version == b._version == 1
    assert "into a (version 0 → 1)" in str(log)


def test_watching_never_hides_an_inplace_error_from_autograd():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()  # sigmoid saves its output for backward
    with watch_ops(y=y):
        torch._foreach_mul_([y], 2.0)  # ...which this overwrites
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_an_optimizer_step_gives_the_same_result_watched_or_not():
    def step(watched):
        torch.manual_seed(0)
        layer = torch.nn.Linear(3, 2)
        opt = torch.optim.Adam(layer.parameters(), foreach=True)
        layer(torch.randn(4, 3)).sum().backward()
        if watched:
            with watch_ops() as log:
                opt.step()
            assert "IN-PLACE" in log.kinds()
        else:
            opt.step()
        return [(p.detach().clone(), p._version) for p in layer.parameters()]

    for (p, pv), (q, qv) in zip(step(False), step(True)):
        assert torch.equal(p, q) and pv == qv


def test_sparse_tensors_are_refused_by_name_and_recorded_as_outputs():
    s = torch.eye(3).to_sparse()
    with pytest.raises(ValueError, match=r"s is a sparse tensor \(layout torch.sparse_coo\)"):
        watch_ops(s=s)
    d = torch.eye(3)
    with watch_ops(d=d) as log:  # the user's code runs on, and the log says what it could not count
        t = d.to_sparse()
        u = t + t
    assert torch.equal(u.to_dense(), 2 * d)
    sparse = [r for r in log if "sparse" in r.note]
    assert sparse and all(r.kind == "NEW" and r.nbytes == 0 for r in sparse)
    assert "sparse" in str(log)
