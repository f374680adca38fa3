"""Look inside tensors (notebooks 00-06): which object, which storage, which version, which graph node."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Sequence

import torch

from clonelab._checks import require_dense_tensor, require_named, storage_key
from clonelab._table import Table
from clonelab._util import version_of

COLUMNS = ["name", "id", "data_ptr", "storage_ptr", "storage_bytes", "shares_storage_with",
           "shape", "stride", "offset", "_version", "is_leaf", "requires_grad", "grad_fn", "grad"]


def _share_memory(a, b) -> bool:
    if storage_key(a) == storage_key(b):
        return True
    if a.device != b.device or a.device.type == "meta":
        return False
    sa, sb = a.untyped_storage(), b.untyped_storage()
    return (sa.nbytes() > 0 and sb.nbytes() > 0 and sa.data_ptr() < sb.data_ptr() + sb.nbytes()
            and sb.data_ptr() < sa.data_ptr() + sa.nbytes())


def shares_storage(a, b) -> bool:
    """True when ``a`` and ``b`` use the same memory: one storage (a view and its base, ``x.detach()``, two slices of
    a tensor even where they do not overlap), or overlapping bytes on one device (``torch.from_numpy(t.numpy())``).

    >>> x = torch.zeros(3)
    >>> shares_storage(x, x[1:]), shares_storage(x, x + 0), shares_storage(x, torch.from_numpy(x.numpy()))
    (True, False, True)
    """
    require_dense_tensor(a, "a")
    require_dense_tensor(b, "b")
    return _share_memory(a, b)


def storage_positions(t) -> list[int]:
    """Where each element of ``t`` (row-major) sits in its storage: ``t[i, j, ...]`` at ``offset + i * stride[0] ...``.

    >>> t = torch.arange(10.0, 70.0, 10.0).reshape(2, 3)
    >>> storage_positions(t[:, 1:]), storage_positions(t.T)
    ([1, 2, 4, 5], [0, 3, 1, 4, 2, 5])
    """
    require_dense_tensor(t, "t")
    # built one dimension at a time, so the cost follows numel and not the span of the storage
    pos = torch.full((), t.storage_offset(), dtype=torch.long)
    for size, stride in zip(t.shape, t.stride()):
        pos = pos.unsqueeze(-1) + torch.arange(size, dtype=torch.long) * stride
    return pos.reshape(-1).tolist()


def _grad_text(t) -> str:
    if not (t.is_leaf or t.retains_grad):
        return "(non-leaf)"  # autograd fills .grad here only after retain_grad(); reading it warns
    if t.grad is None:
        return "None"
    return str(t.grad.detach().tolist()) if t.grad.numel() <= 4 else f"set {tuple(t.grad.shape)}"


def describe(*tensors, names: Sequence[str] | str | None = None, columns: Sequence[str] | str | None = None) -> Table:
    """A table of facts about each tensor: identity, storage, layout, autograd state.

    ``names``: one per tensor, a list or a string ("a b"). ``columns``: which of :data:`COLUMNS` to show, in order.
    ``shares_storage_with``: earlier rows that share memory with this one; ``grad``: ``.grad`` (values up to 4 of them).

    >>> a = torch.tensor([2., 3., 4.], requires_grad=True)
    >>> describe(a, a.clone(), names="a b", columns="shares_storage_with grad_fn").rows
    [['a', '-', None], ['b', '-', 'CloneBackward0']]
    """
    if not tensors:
        raise TypeError("describe() needs at least one tensor")
    names = [f"t{i}" for i in range(len(tensors))] if names is None else (
        names.replace(",", " ").split() if isinstance(names, str) else list(names))
    if len(names) != len(tensors):
        raise ValueError(f"names must give one name per tensor: {len(tensors)} tensors, {len(names)} names")
    wanted = COLUMNS if columns is None else (
        columns.replace(",", " ").split() if isinstance(columns, str) else list(columns))
    if any(c not in COLUMNS for c in wanted):
        raise ValueError(f"columns must be names from {COLUMNS[1:]}, got {wanted}")
    rows = []
    for i, (name, t) in enumerate(zip(names, tensors)):
        require_dense_tensor(t, f"tensor {name!r}")
        sharing = [n + (" (same object)" if o is t else "")
                   for n, o in zip(names[:i], tensors[:i]) if _share_memory(o, t)]
        storage = t.untyped_storage()
        facts = dict(zip(COLUMNS, [name, hex(id(t)), hex(t.data_ptr()), hex(storage.data_ptr()), storage.nbytes(),
                                   ", ".join(sharing) or "-", tuple(t.shape), tuple(t.stride()), t.storage_offset(),
                                   version_of(t), t.is_leaf, t.requires_grad,
                                   type(t.grad_fn).__name__ if t.grad_fn is not None else None, _grad_text(t)]))
        rows.append([name] + [facts[c] for c in wanted if c != "name"])
    return Table(["name"] + [c for c in wanted if c != "name"], rows)


@dataclasses.dataclass(frozen=True)
class VersionSnapshot:
    """The ``_version`` and values of some named tensors at one moment, under a label."""
    label: str
    rows: tuple[tuple[str, int, tuple[float, ...]], ...]  # (name, version, values)


def version_snapshot(tensors: Mapping[str, torch.Tensor], label: str) -> VersionSnapshot:
    """``t._version`` and the first 6 values of each named tensor, after the step ``label`` (notebook 04).

    >>> x = torch.zeros(2); y = x
    >>> x += 1
    >>> version_snapshot({"x": x, "y = x": y}, "x += 1").rows
    (('x', 1, (1.0, 1.0)), ('y = x', 1, (1.0, 1.0)))
    """
    require_named(tensors, "tensors", "tensor", require_dense_tensor)
    return VersionSnapshot(label, tuple((name, version_of(t), tuple(float(v) for v in t.detach().reshape(-1)[:6].tolist()))
                                        for name, t in tensors.items()))
