"""Argument checks shared by the helpers, so every error names its argument."""

from __future__ import annotations

from typing import Any, Iterable


def require_tensor(value: Any, name: str) -> None:
    """Raise TypeError, naming the argument, unless ``value`` is a torch.Tensor."""
    import torch

    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")


def require_dense_tensor(value: Any, name: str) -> None:
    """Like :func:`require_tensor`, and raise ValueError, naming the argument, for a sparse tensor.

    A sparse tensor keeps its values and indices in several buffers, so it has
    no single storage to describe or compare (PyTorch raises a bare
    NotImplementedError when asked for one).
    """
    import torch

    require_tensor(value, name)
    if value.layout != torch.strided:
        what = "a sparse tensor" if "sparse" in str(value.layout) else "not a dense tensor"
        raise ValueError(f"{name} is {what} (layout {value.layout}); "
                         "clonelab's helpers handle strided (dense) tensors only")


def require_choice(value: Any, name: str, choices: Iterable[Any]) -> None:
    """Raise ValueError, naming the argument and the accepted values, unless value is one of them."""
    choices = tuple(choices)
    if value not in choices:
        accepted = " or ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be {accepted}, got {value!r}")


def storage_key(t) -> int:
    """An identity for the storage behind ``t``, valid on every device.

    ``untyped_storage().data_ptr()`` is 0 for every ``meta`` tensor, so it
    cannot tell two meta storages apart. ``_cdata`` is the address of the
    C++ StorageImpl object itself, which views share and copies do not.
    Dense (strided) tensors only: a sparse tensor has no single storage.
    """
    return t.untyped_storage()._cdata
