"""Look inside tensors: which object, which storage, which version, which graph node.

>>> import torch
>>> from clonelab import describe, shares_storage
>>> a = torch.arange(4.)
>>> shares_storage(a, a.view(2, 2)), shares_storage(a, a.clone())
(True, False)
"""

from __future__ import annotations

from typing import Sequence

import torch

from clonelab._checks import require_dense_tensor, storage_key
from clonelab._util import version_of
from clonelab._table import Table

COLUMNS = [
    "name", "id", "data_ptr", "storage_ptr", "storage_bytes", "shares_storage_with",
    "shape", "stride", "offset", "_version", "is_leaf", "requires_grad", "grad_fn", "grad",
]


def shares_storage(a, b) -> bool:
    """True when ``a`` and ``b`` share memory: writing into one can change the other.

    Exactly: True when both are backed by the same storage object (a view and
    its base, ``x.detach()``), or when the byte ranges of their two storages,
    ``[data_ptr, data_ptr + nbytes)``, overlap on the same device. The second
    case catches memory shared through a storage object of its own, as
    ``torch.from_numpy(t.numpy())`` and ``torch.from_dlpack(t)`` do. A storage
    of 0 bytes overlaps nothing. ``meta`` tensors have no memory, so for them
    only the storage object can count. ``clone()`` and out-of-place ops
    give new memory: False.

    >>> import torch
    >>> x = torch.zeros(3)
    >>> shares_storage(x, x[1:]), shares_storage(x, x + 0)
    (True, False)
    >>> shares_storage(x, torch.from_numpy(x.numpy()))
    True
    """
    require_dense_tensor(a, "a")
    require_dense_tensor(b, "b")
    return _share_memory(a, b)


def storage_positions(t) -> list[int]:
    """Where each element of ``t`` sits in its storage, in ``t``'s own (row-major) element order.

    Element ``t[i, j, ...]`` lives at position ``offset + i * stride[0] + j * stride[1] + ...``,
    counted in elements from the start of the storage. Works for any number of dimensions.

    >>> import torch
    >>> t = torch.arange(10.0, 70.0, 10.0).reshape(2, 3)
    >>> storage_positions(t[:, 1:])       # a slice: starts at 1, keeps t's strides
    [1, 2, 4, 5]
    >>> storage_positions(t.T)            # the transpose: strides swapped
    [0, 3, 1, 4, 2, 5]
    >>> storage_positions(torch.tensor(5.0))   # 0-d: one element
    [0]
    """
    require_dense_tensor(t, "t")
    # offset + sum(index_k * stride_k), built one dimension at a time with tensors, so the
    # cost follows numel and not the (possibly huge) span of the storage
    pos = torch.full((), t.storage_offset(), dtype=torch.long)
    for size, stride in zip(t.shape, t.stride()):
        pos = pos.unsqueeze(-1) + torch.arange(size, dtype=torch.long) * stride
    return pos.reshape(-1).tolist()


def _share_memory(a, b) -> bool:
    if storage_key(a) == storage_key(b):
        return True
    if a.device != b.device or a.device.type == "meta":
        return False
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if sa.nbytes() == 0 or sb.nbytes() == 0:
        return False
    return sa.data_ptr() < sb.data_ptr() + sb.nbytes() and sb.data_ptr() < sa.data_ptr() + sa.nbytes()


def describe(*tensors, names: Sequence[str] | str | None = None,
             columns: Sequence[str] | str | None = None) -> Table:
    """A table of facts about each tensor: identity, storage, layout, autograd state.

    ``id`` is the Python object; ``data_ptr`` is the first element's address;
    ``storage_ptr``/``storage_bytes`` describe the whole buffer. Two names for the
    same object show the same ``id``; a view shows another ``id`` on the same
    storage; a clone shows new storage. ``shares_storage_with`` lists earlier rows
    that share memory with this one (as :func:`shares_storage` decides). ``grad``
    says whether ``.grad`` is set (and its values when it has at most 4 elements);
    for a non-leaf it says ``(non-leaf)``, since autograd fills ``.grad`` there
    only after ``retain_grad()``, and then it shows the grad as for a leaf.

    ``columns`` picks and orders the columns (the name always comes first),
    so a cell can show only what its point needs.

    >>> import torch
    >>> a = torch.tensor([2., 3., 4.], requires_grad=True)
    >>> t = describe(a, a.clone(), names="a b")
    >>> t.column("grad_fn")
    [None, 'CloneBackward0']
    >>> describe(a, a.clone(), names="a b", columns="id grad_fn").columns
    ['name', 'id', 'grad_fn']
    """
    if not tensors:
        raise TypeError("describe() needs at least one tensor")
    if names is None:
        names = [f"t{i}" for i in range(len(tensors))]
    elif isinstance(names, str):
        names = names.replace(",", " ").split()
    else:
        names = list(names)
    if len(names) != len(tensors):
        raise ValueError(f"names must give one name per tensor: {len(tensors)} tensors, {len(names)} names")
    if columns is None:
        picked = COLUMNS
    else:
        wanted = columns.replace(",", " ").split() if isinstance(columns, str) else list(columns)
        unknown = [c for c in wanted if c not in COLUMNS]
        if unknown:
            raise ValueError(f"columns must be names from {COLUMNS[1:]}, got unknown {unknown}")
        picked = ["name"] + [c for c in wanted if c != "name"]
    rows = []
    for i, (name, t) in enumerate(zip(names, tensors)):
        require_dense_tensor(t, f"tensor {name!r}")
        # "a (same object)" when the earlier row is this very object, not a view
        sharing = [n + (" (same object)" if o is t else "")
                   for n, o in zip(names[:i], tensors[:i]) if _share_memory(o, t)]
        storage = t.untyped_storage()
        has_grad = t.is_leaf or t.retains_grad  # reading .grad of any other non-leaf warns
        grad = t.grad if has_grad else None
        if not has_grad:
            grad_text = "(non-leaf)"  # PyTorch keeps .grad here only after retain_grad()
        elif grad is None:
            grad_text = "None"
        elif grad.numel() <= 4:
            grad_text = str(grad.detach().tolist())
        else:
            grad_text = f"set {tuple(grad.shape)}"
        rows.append([
            name,
            hex(id(t)),
            hex(t.data_ptr()),
            hex(storage.data_ptr()),
            storage.nbytes(),
            ", ".join(sharing) or "-",
            tuple(t.shape),
            tuple(t.stride()),
            t.storage_offset(),
            version_of(t),
            t.is_leaf,
            t.requires_grad,
            type(t.grad_fn).__name__ if t.grad_fn is not None else None,
            grad_text,
        ])
    keep = [COLUMNS.index(c) for c in picked]
    return Table(picked, [[row[i] for i in keep] for row in rows])
