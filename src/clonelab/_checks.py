"""Argument checks that torch would not make as clearly, so that an error names its argument."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def require_tensor(value: Any, name: str) -> None:
    """Raise TypeError, naming the argument, unless ``value`` is a torch.Tensor."""
    import torch
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")


def require_dense_tensor(value: Any, name: str) -> None:
    """Like :func:`require_tensor`, and ValueError for a sparse tensor: it has no single storage to describe."""
    import torch
    require_tensor(value, name)
    if value.layout != torch.strided:
        what = "a sparse tensor" if "sparse" in str(value.layout) else "not a dense tensor"
        raise ValueError(f"{name} is {what} (layout {value.layout}); clonelab's helpers handle strided (dense) "
                         "tensors only")


def require_bool(value: Any, name: str) -> bool:
    """``value`` if it is True or False; else TypeError naming the argument (1 and None are slips)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def require_int(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` if it is an int >= ``minimum`` (TypeError for a bool: True as a size is a slip; else ValueError)."""
    wanted = "a positive int" if minimum == 1 else f"an int >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be {wanted}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be {wanted}, got {value!r}")
    return value


def require_named(values: Any, argname: str, what: str, check: Callable[[Any, str], Any] | None = None) -> None:
    """TypeError, naming ``argname``, unless ``values`` is a non-empty dict of str name -> ``what``; then
    ``check(value, "argname['name']")`` for each value, when given."""
    if not (isinstance(values, Mapping) and values and all(isinstance(key, str) for key in values)):
        raise TypeError(f"{argname} must be a non-empty dict of str name -> {what}, e.g. {{'a': a, 'b': b}}; "
                        f"got {values!r:.60}")
    for key, value in values.items() if check else ():
        check(value, f"{argname}[{key!r}]")


def storage_key(t) -> int:
    """The address of the C++ StorageImpl behind ``t``, shared by views, not copies (on ``meta``, data_ptr() is 0)."""
    return t.untyped_storage()._cdata
