"""Record each ATen op that reaches a dispatch mode, and what each output is: NEW memory, a VIEW, or an
IN-PLACE write.

A ``TorchDispatchMode`` sees each ATen call below autograd: a composite op appears as the ops it decomposes into
(``reshape`` as ``clone`` and ``_unsafe_view``), and the ops a kernel calls internally do not appear. Each op's
schema says whether a result aliases an argument (``Tensor(a)``) or writes into one (``Tensor(a!)``): a write a
kernel does not declare (batch norm's running statistics) is not logged. Under the mode, outputs, gradients and
version counters are what they would be without it, but autograd takes its tensor-subclass-safe paths: backward
sums the contributions it gathers within one pass out of place (``aten::add``, not ``add_``), and some backward
formulas run other, out-of-place ops; accumulating into an existing ``.grad`` is still ``add_``."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from clonelab._checks import require_dense_tensor, storage_key
from clonelab._table import Table
from clonelab._util import dtype_name, version_of

NEW, VIEW, INPLACE, VALUE = "NEW", "VIEW", "IN-PLACE", "VALUE"


@dataclass
class OpRecord:
    """One output of one ATen op. ``kind``: NEW (fresh storage of ``nbytes`` bytes), VIEW (shares the storage of
    ``target``), IN-PLACE (wrote into ``target``; ``version``: its version counter before and after) or VALUE (no
    tensor, e.g. ``.item()``). ``note``: what ``nbytes`` leaves out (meta tensors, sparse buffers)."""

    op: str
    call: int  # which op call this output came from (an op can return several)
    kind: str
    nbytes: int
    target: str | None
    version: tuple[int, int] | None
    shape: tuple[int, ...]
    dtype: str
    device: str
    note: str = ""


class OpLog(list):
    """The :class:`OpRecord` items that :func:`watch_ops` recorded, one per tensor output; prints as a table."""

    def __init__(self) -> None:
        super().__init__()
        # In-place records waiting for their "after" version: most in-place ops (aten.add_) bump it in a dispatch
        # layer above this mode, after the handler returns, so it is read when the next op starts or the block ends.
        self._pending: list[tuple[OpRecord, Any]] = []

    def _settle(self) -> None:
        for record, target in self._pending:
            record.version = (record.version[0], version_of(target))
        self._pending.clear()

    @property
    def ops(self) -> list[str]:
        """Op names in the order they ran; an op with several outputs appears once."""
        return [r.op for i, r in enumerate(self) if i == 0 or r.call != self[i - 1].call]

    @property
    def new_bytes(self) -> int:
        """Total bytes of fresh storage created inside the block (not an ``out=`` tensor's growth: a write)."""
        return sum(r.nbytes for r in self)

    def kinds(self) -> list[str]:
        """The kind of every record, in order."""
        return [r.kind for r in self]

    def table(self) -> Table:
        rows = []
        for r in self:
            what = {NEW: f"{r.nbytes} bytes" + (f" ({r.note})" if r.note else ""),
                    VALUE: "returns a Python value, no tensor", VIEW: f"of {r.target}"}.get(r.kind)
            if r.kind == INPLACE:
                what = f"into {r.target}" + (f" (version {r.version[0]} → {r.version[1]})" if r.version else "")
            rows.append([r.op, r.kind, what, r.shape, r.dtype, r.device])
        return Table(["op", "kind", "what", "shape", "dtype", "device"], rows)

    def __repr__(self) -> str:
        return str(self.table()) if self else "(no ops ran)"

    def _repr_html_(self) -> str:
        return self.table()._repr_html_() if self else "<p>(no ops ran)</p>"


def _tensor_name(t, arg_name: str, named: dict[str, Any], op: str) -> str:
    """Name a tensor argument for the log: the caller's name if we know it."""
    key = _storage(t)
    for name, value in named.items():
        if value is t:
            return name
    for name, value in named.items():
        if key is not None and storage_key(value) == key:
            return f"a view of {name}"
    # PyTorch wraps a Python number (x[0] = 5) in a fresh 0-d tensor first
    return "a Python number" if op == "aten.lift_fresh" else arg_name


def _tensor_args(func, args, kwargs):
    """(schema argument, tensor) pairs for every tensor argument, lists of tensors included."""
    pairs = []
    for i, arg in enumerate(func._schema.arguments):
        value = kwargs.get(arg.name) if arg.kwarg_only or i >= len(args) else args[i]
        pairs += [(arg, v) for v in (value if isinstance(value, (list, tuple)) else [value])
                  if isinstance(v, torch.Tensor)]
    return pairs


def _storage(t) -> int | None:
    """storage_key(t), or None for a sparse tensor, which has no single storage."""
    return storage_key(t) if t.layout == torch.strided else None


def _writes(arg) -> bool:
    """Whether a schema argument is written in place: ``Tensor(a!)`` or ``Tensor(a!)[]``."""
    return arg.alias_info is not None and arg.alias_info.is_write


@functools.lru_cache(maxsize=None)
def _bumps_in_the_ops_it_calls(func) -> bool:
    """Whether ``func`` writes into an argument but has no kernel in the ADInplaceOrView dispatch layer (where
    PyTorch bumps version counters), so that the ops it calls bump them (``aten._foreach_mul_`` calls ``mul_``)."""
    return (any(_writes(a) for a in func._schema.arguments)
            and not torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "ADInplaceOrView"))


def _call(func, args, kwargs):
    """Run the op as it would run without watch_ops, version bumps included."""
    if not _bumps_in_the_ops_it_calls(func):
        return func(*args, **kwargs)
    # A dispatch mode's handler runs with the layers above it switched off, ADInplaceOrView included: the inner
    # aten.mul_ calls would skip their bumps, and backward() would miss the write. Switch that layer back on.
    C = torch._C
    exclude = C._dispatch_tls_local_exclude_set().remove(C.DispatchKey.ADInplaceOrView)
    with C._ForceDispatchKeyGuard(C._dispatch_tls_local_include_set(), exclude):
        return func(*args, **kwargs)


class _Recorder(TorchDispatchMode):
    """The dispatch mode behind :class:`watch_ops`: it sees every ATen call and adds its records to ``log``."""

    def __init__(self, log: OpLog, named: dict[str, Any]):
        super().__init__()
        self.log, self.named, self.calls = log, named, 0

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # By default the handler is wrapped to keep torch.compile out, which imports torch._dynamo, a slow import
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.log._settle()
        inputs = _tensor_args(func, args, kwargs)
        before = {id(t): version_of(t) for _, t in inputs}
        out = _call(func, args, kwargs)
        self.calls += 1
        op = f"{func.namespace}.{func._schema.name.split('::')[-1]}"
        first, seen_new, written = len(self.log), set(), set()  # written: ids of the arguments written into
        outputs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        for k, o in enumerate(outputs):
            alias = func._schema.returns[k].alias_info if k < len(func._schema.returns) else None
            key = _storage(o)
            # the argument this output aliases: by the schema's alias set, else by storage
            owner = None if alias is None else next(((a, t) for a, t in inputs if a.alias_info is not None
                                                     and a.alias_info.before_set == alias.before_set), None)
            if owner is None and key is not None:
                owner = next(((a, t) for a, t in inputs if _storage(t) == key), None)
            if owner is not None and alias is not None and alias.is_write:
                self._write(op, *owner, before, o)
                written.add(id(owner[1]))
            elif owner is not None:
                self._add(op, VIEW, o, target=_tensor_name(owner[1], owner[0].name, self.named, op))
            elif key is None:  # sparse: several buffers, and no storage to count
                self._add(op, NEW, o, note=f"layout {o.layout}: bytes not counted")
            else:
                nbytes = 0 if key in seen_new else o.untyped_storage().nbytes()
                seen_new.add(key)
                self._add(op, NEW, o, nbytes=0 if o.is_meta else nbytes,
                          note=f"meta, {nbytes} on a real device" if o.is_meta and nbytes else "")
        for arg, t in inputs:  # ops like torch._foreach_mul_ write into tensors they do not return
            if _writes(arg) and id(t) not in written:
                self._write(op, arg, t, before, t)
                written.add(id(t))
        if len(self.log) == first:
            self.log.append(OpRecord(op, self.calls, VALUE, 0, None, None, (), "-", "-"))
        return out

    def _add(self, op, kind, shown, nbytes=0, target=None, version=None, note=""):
        self.log.append(OpRecord(op, self.calls, kind, nbytes, target, version, tuple(shown.shape),
                                 dtype_name(shown.dtype), str(shown.device), note))

    def _write(self, op, arg, target, before, shown):
        """Record an IN-PLACE write into ``target``; its "after" version is read later."""
        self._add(op, INPLACE, shown, target=_tensor_name(target, arg.name, self.named, op),
                  version=(before[id(target)], None))
        self.log._pending.append((self.log[-1], target))


class watch_ops:
    """Context manager that records each ATen op that reaches its dispatch mode (the module's docstring says which),
    as an :class:`OpLog` (a table, and data).

    Pass the tensors you care about by keyword (``watch_ops(x=x)``) so the log names them; each must be a dense tensor.

    >>> x = torch.ones(2, 3)
    >>> with watch_ops(x=x) as log:
    ...     y = x                 # binds a name: no op
    ...     v = x.view(6)         # VIEW of x
    ...     c = x.clone()         # NEW, 24 bytes
    ...     _ = x.add_(1)         # IN-PLACE into x
    >>> log.ops, log.kinds(), log.new_bytes, log[2].target, log[2].version
    (['aten.view', 'aten.clone', 'aten.add_'], ['VIEW', 'NEW', 'IN-PLACE'], 24, 'x', (0, 1))
    """

    def __init__(self, **named_tensors):
        for name, value in named_tensors.items():
            require_dense_tensor(value, name)
        self.named = named_tensors

    def __enter__(self) -> OpLog:   # each block fills a log of its own, so a watcher can be reused
        self.log = OpLog()
        self._mode = _Recorder(self.log, self.named)
        self._mode.__enter__()
        return self.log

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
        self.log._settle()
