from __future__ import annotations

import pytest
import torch

from clonelab import describe, shares_storage, storage_positions


def test_describe_reports_the_blog_posts_clone_test():
    a = torch.tensor([2.0, 3.0, 4.0], requires_grad=True)
    a.grad = torch.tensor([1.0, 2.0, 3.0])
    b = a.clone()
    c = a
    t = describe(a, b, c, names="a b c")
    rows = {r["name"]: r for r in t}
    assert rows["a"]["id"] == rows["c"]["id"] != rows["b"]["id"]
    assert rows["a"]["data_ptr"] == rows["c"]["data_ptr"] != rows["b"]["data_ptr"]
    assert rows["b"]["grad_fn"] == "CloneBackward0" and rows["a"]["grad_fn"] is None
    assert rows["a"]["grad"] == "[1.0, 2.0, 3.0]" and rows["b"]["grad"] == "(non-leaf)"
    assert rows["b"]["is_leaf"] is False and rows["b"]["requires_grad"] is True
    assert rows["c"]["shares_storage_with"] == "a (same object)"
    assert rows["b"]["shares_storage_with"] == "-"


def test_describe_layout_of_a_view():
    x = torch.arange(12.0).view(3, 4)
    col = x[:, 1]
    row = describe(col, names=["col"]).records()[0]
    assert row["shape"] == (3,) and row["stride"] == (4,) and row["offset"] == 1
    assert row["storage_bytes"] == 48


def test_describe_renders_text_and_html():
    t = describe(torch.zeros(2), names=["z"])
    assert "storage_bytes" in str(t) and "<table>" in t._repr_html_()


def test_describe_names_default_and_from_list():
    t = describe(torch.zeros(1), torch.ones(1))
    assert t.column("name") == ["t0", "t1"]
    assert describe(torch.zeros(1), names=["only"]).column("name") == ["only"]


def test_describe_meta_and_inference_tensors():
    m = torch.empty(2, 3, device="meta")
    assert describe(m, m.t(), names="m mt").column("shares_storage_with") == ["-", "m"]
    with torch.inference_mode():
        i = torch.ones(2)
    assert describe(i).column("_version") == [None]


def test_describe_errors_name_the_argument():
    with pytest.raises(TypeError, match="tensor 'x' must be a torch.Tensor, got list"):
        describe([1, 2], names=["x"])
    with pytest.raises(ValueError, match="names must give one name per tensor"):
        describe(torch.zeros(1), names="a b")
    with pytest.raises(TypeError, match="at least one tensor"):
        describe()


def test_shares_storage():
    x = torch.arange(6.0)
    assert shares_storage(x, x)
    assert shares_storage(x, x.view(2, 3)) and shares_storage(x, x[::2]) and shares_storage(x, x.detach())
    assert not shares_storage(x, x.clone()) and not shares_storage(x, x + 0)
    m = torch.empty(3, device="meta")
    assert shares_storage(m, m[1:]) and not shares_storage(m, torch.empty(3, device="meta"))
    with pytest.raises(TypeError, match="b must be a torch.Tensor"):
        shares_storage(x, 3)


def test_describe_columns_pick_and_order():
    a = torch.zeros(2)
    t = describe(a, a[1:], names="a v", columns=["storage_ptr", "offset"])
    assert t.columns == ["name", "storage_ptr", "offset"]
    assert t.column("offset") == [0, 1] and len(set(t.column("storage_ptr"))) == 1
    with pytest.raises(ValueError, match="columns must be names from"):
        describe(a, columns="idd")


def test_shares_storage_means_shared_memory():
    x = torch.arange(6.0)
    # other storage objects over the same bytes
    assert shares_storage(x, torch.from_numpy(x.numpy()))
    assert shares_storage(x, torch.from_dlpack(x))
    assert shares_storage(x[3:], torch.from_numpy(x.numpy())[:2])  # different parts of one buffer
    assert not shares_storage(x, x.clone()) and not shares_storage(x, torch.arange(6.0))
    m = torch.empty(3, device="meta")
    assert shares_storage(m, m.view(3, 1)) and not shares_storage(m, torch.empty(3, device="meta"))
    empty = torch.empty(0)
    assert shares_storage(empty, empty) and not shares_storage(x, torch.empty(0))


def test_describe_shows_a_retained_grad():
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    b = a * 2
    c = a * 3
    b.retain_grad()
    assert describe(b, names="b").column("grad") == ["None"]  # retained, not filled yet
    (b + c).sum().backward()
    assert describe(b, c, names="b c").column("grad") == ["[1.0, 1.0]", "(non-leaf)"]


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_sparse_tensors_are_refused_by_name():
    s = torch.eye(2).to_sparse()
    with pytest.raises(ValueError, match=r"tensor 's' is a sparse tensor \(layout torch.sparse_coo\); "
                                         r"clonelab's helpers handle strided \(dense\) tensors only"):
        describe(torch.zeros(1), s, names="z s")
    with pytest.raises(ValueError, match=r"b is a sparse tensor \(layout torch.sparse_coo\)"):
        shares_storage(torch.zeros(1), s)
    with pytest.raises(ValueError, match=r"a is a sparse tensor \(layout torch.sparse_csr\)"):
        shares_storage(torch.eye(2).to_sparse_csr(), torch.zeros(1))


def test_storage_positions_find_every_element_in_the_storage():
    t = torch.arange(24.0).reshape(2, 3, 4)   # contiguous from 0: value == storage position
    flat = t.flatten()
    for view in (t, t[:, 1:, ::2], t.permute(2, 0, 1), t[1], t[..., 3], t.expand(2, 2, 3, 4)[1], t[0, 0, 0]):
        positions = storage_positions(view)
        assert len(positions) == view.numel()
        assert view.flatten().tolist() == flat[positions].tolist()
    assert storage_positions(t.permute(2, 1, 0)[..., 0]) == [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
    assert storage_positions(torch.empty(0)) == []


def test_storage_positions_rejects_a_non_tensor():
    with pytest.raises(TypeError, match="t must be a torch.Tensor, got list"):
        storage_positions([1, 2])
