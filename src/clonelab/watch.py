"""Record every ATen op that runs, and what each output is: NEW memory, a VIEW, or an IN-PLACE write.

PyTorch turns every tensor operation into calls of ATen operators (``aten.add``,
``aten.clone``, ``aten.view`` ...). A ``TorchDispatchMode`` sees each call with
its real arguments, after autograd, on every device. Each operator's schema says
whether its result aliases an argument (a view, ``Tensor(a)``) or writes into one
(in place, ``Tensor(a!)``); we read that, and check storages too. Some ops write
into tensors they do not return (``torch._foreach_mul_``, which optimizers use):
each tensor they write into gets its own IN-PLACE record.

Plain assignment (``b = a``) runs no operator, so it records nothing.

>>> import torch
>>> from clonelab import watch_ops
>>> x = torch.ones(2, 3)
>>> with watch_ops(x=x) as log:
...     y = x                 # binds a name: no op
...     v = x.view(6)         # VIEW of x
...     c = x.clone()         # NEW, 24 bytes
...     _ = x.add_(1)         # IN-PLACE into x
>>> log.ops
['aten.view', 'aten.clone', 'aten.add_']
>>> [r.kind for r in log], log.new_bytes
(['VIEW', 'NEW', 'IN-PLACE'], 24)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from clonelab._checks import require_dense_tensor, storage_key
from clonelab._util import version_of
from clonelab._table import Table

NEW, VIEW, INPLACE, VALUE = "NEW", "VIEW", "IN-PLACE", "VALUE"


@dataclass
class OpRecord:
    """One output of one ATen op.

    ``kind`` is NEW (fresh storage of ``nbytes`` bytes), VIEW (shares the
    storage of ``target``), IN-PLACE (wrote into ``target``; ``version`` is
    its version counter before and after) or VALUE (the op returned no tensor
    and wrote into none, like the ``aten._local_scalar_dense`` behind ``.item()``).
    ``note`` says what ``nbytes`` leaves out: a ``meta`` tensor allocates
    nothing (``nbytes`` is 0; the note gives the size it would have), and a
    sparse tensor's buffers are not counted.
    """

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


@dataclass
class OpLog:
    """The ops recorded by :func:`watch_ops`, one record per tensor output.

    Iterate over it for :class:`OpRecord` items; it prints as a table.
    """

    records: list[OpRecord] = field(default_factory=list)
    # In-place records still waiting for their "after" version, with their targets.
    # For most in-place ops (aten.add_) the version counter is bumped by a dispatch
    # layer *above* the one we watch, after our handler returns, so we read it when
    # the next op starts (or when the block ends), by which time the bump has happened.
    _pending: list = field(default_factory=list, repr=False)

    def _settle(self) -> None:
        for record, target in self._pending:
            record.version = (record.version[0], version_of(target))
        self._pending.clear()

    def __iter__(self):
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, i: int) -> OpRecord:
        return self.records[i]

    @property
    def ops(self) -> list[str]:
        """Op names in the order they ran; an op with several outputs appears once."""
        names, last_call = [], None
        for r in self.records:
            if r.call != last_call:
                names.append(r.op)
                last_call = r.call
        return names

    @property
    def new_bytes(self) -> int:
        """Total bytes of fresh storage created inside the block."""
        return sum(r.nbytes for r in self.records)

    def kinds(self) -> list[str]:
        """The kind of every record, in order."""
        return [r.kind for r in self.records]

    def table(self) -> Table:
        rows = []
        for r in self.records:
            if r.kind == NEW:
                what = f"{r.nbytes} bytes" + (f" ({r.note})" if r.note else "")
            elif r.kind == VALUE:
                what = "returns a Python value, no tensor"
            elif r.kind == VIEW:
                what = f"of {r.target}"
            else:
                what = f"into {r.target} (version {r.version[0]} → {r.version[1]})" if r.version else f"into {r.target}"
            rows.append([r.op, r.kind, what, r.shape, r.dtype, r.device])
        return Table(["op", "kind", "what", "shape", "dtype", "device"], rows,
                     title=None if rows else "no ops ran")

    def __str__(self) -> str:
        return str(self.table()) if self.records else "(no ops ran)"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return self.table()._repr_html_() if self.records else "<p>(no ops ran)</p>"


def _label(t, arg_name: str, named: dict[str, Any], op: str = "") -> str:
    """Name a tensor argument for the log: the caller's name if we know it."""
    for name, value in named.items():
        if value is t:
            return name
    key = _storage(t)
    for name, value in named.items():
        if key is not None and storage_key(value) == key:
            return f"a view of {name}"
    if op == "aten.lift_fresh":
        # PyTorch wraps a Python number (x[0] = 5) in a fresh 0-d tensor first
        return "a Python number"
    return arg_name


def _tensor_args(func, args, kwargs):
    """(schema argument, tensor) pairs for every tensor argument, lists of tensors included."""
    import torch

    pairs = []
    for i, arg in enumerate(func._schema.arguments):
        if arg.kwarg_only or i >= len(args):
            value = kwargs.get(arg.name, None)
        else:
            value = args[i]
        values = value if isinstance(value, (list, tuple)) else [value]
        pairs += [(arg, v) for v in values if isinstance(v, torch.Tensor)]
    return pairs


def _storage(t) -> int | None:
    """storage_key(t), or None for a sparse tensor, which has no single storage."""
    import torch

    return storage_key(t) if t.layout == torch.strided else None


def _facts(t) -> tuple[tuple[int, ...], str, str]:
    """The shape, dtype and device columns of a record."""
    return tuple(t.shape), str(t.dtype).replace("torch.", ""), str(t.device)


def _writes(arg) -> bool:
    """Whether a schema argument is written in place: ``Tensor(a!)`` or ``Tensor(a!)[]``."""
    return arg.alias_info is not None and arg.alias_info.is_write


@functools.lru_cache(maxsize=None)
def _bumps_in_the_ops_it_calls(func) -> bool:
    """Whether ``func`` writes into an argument but leaves the version bump to the ops it calls.

    PyTorch bumps a tensor's version counter in its ADInplaceOrView dispatch
    layer. ``aten.add_`` has a kernel of its own there, which runs above our
    mode and bumps after we return. ``aten._foreach_mul_`` has none: its kernel
    calls ``aten.mul_`` on each tensor, and each of those calls bumps its tensor.
    """
    import torch

    return (any(_writes(a) for a in func._schema.arguments)
            and not torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "ADInplaceOrView"))


def _call(func, args, kwargs):
    """Run the op as it would run without watch_ops, version bumps included."""
    import torch

    if not _bumps_in_the_ops_it_calls(func):
        return func(*args, **kwargs)
    # A dispatch mode's handler runs with every dispatch layer above it switched off,
    # ADInplaceOrView included, so the inner aten.mul_ calls would skip their bumps:
    # autograd would then miss the write, and backward() would return a wrong gradient
    # where it should raise. We switch that one layer back on for the call.
    C = torch._C
    exclude = C._dispatch_tls_local_exclude_set().remove(C.DispatchKey.ADInplaceOrView)
    with C._ForceDispatchKeyGuard(C._dispatch_tls_local_include_set(), exclude):
        return func(*args, **kwargs)


@functools.lru_cache(maxsize=None)
def _recorder_class():
    """The TorchDispatchMode behind watch_ops, defined on first use so importing clonelab stays cheap."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Recorder(TorchDispatchMode):
        def __init__(self, log: OpLog, named: dict[str, Any]):
            super().__init__()
            self.log, self.named = log, named

        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # By default a dispatch mode wraps its handler to keep torch.compile out of
            # it, which imports torch._dynamo (about 2 s). We never compile in here.
            return False

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            log = self.log
            log._settle()
            inputs = _tensor_args(func, args, kwargs)
            before = {id(t): version_of(t) for _, t in inputs}
            out = _call(func, args, kwargs)
            call = len({r.call for r in log.records})
            name = f"{func.namespace}.{func._schema.name.split('::')[-1]}"
            outputs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
            returns = func._schema.returns
            first = len(log.records)
            seen_new: set[int] = set()
            written: set[int] = set()  # ids of the arguments given an IN-PLACE record
            for k, o in enumerate(outputs):
                alias = returns[k].alias_info if k < len(returns) else None
                # the argument this output aliases: by the schema's alias set, else by storage
                owner = None
                if alias is not None:
                    owner = next(((a, t) for a, t in inputs if a.alias_info is not None
                                  and a.alias_info.before_set == alias.before_set), None)
                key = _storage(o)
                if owner is None and key is not None:
                    owner = next(((a, t) for a, t in inputs if _storage(t) == key), None)
                if owner is not None:
                    arg, t = owner
                    if alias is not None and alias.is_write:
                        self._write(name, call, arg, t, before[id(t)], o)
                        written.add(id(t))
                    else:
                        log.records.append(OpRecord(name, call, VIEW, 0, _label(t, arg.name, self.named, name),
                                                    None, *_facts(o)))
                elif key is None:  # sparse: several buffers, and no storage to count
                    log.records.append(OpRecord(name, call, NEW, 0, None, None, *_facts(o),
                                                note=f"layout {o.layout}: bytes not counted"))
                else:
                    nbytes = 0 if key in seen_new else o.untyped_storage().nbytes()
                    seen_new.add(key)
                    note = f"meta, {nbytes} on a real device" if o.is_meta and nbytes else ""
                    log.records.append(OpRecord(name, call, NEW, 0 if o.is_meta else nbytes, None, None,
                                                *_facts(o), note=note))
            # Ops like torch._foreach_mul_ write into tensors they do not return.
            for arg, t in inputs:
                if _writes(arg) and id(t) not in written:
                    self._write(name, call, arg, t, before[id(t)], t)
                    written.add(id(t))
            if len(log.records) == first:
                log.records.append(OpRecord(name, call, VALUE, 0, None, None, (), "-", "-"))
            return out

        def _write(self, op, call, arg, target, version_before, shown):
            """Record an IN-PLACE write into ``target``; its "after" version is read later."""
            record = OpRecord(op, call, INPLACE, 0, _label(target, arg.name, self.named, op),
                              (version_before, None), *_facts(shown))
            self.log.records.append(record)
            self.log._pending.append((record, target))

    return Recorder


class watch_ops:
    """Context manager that records every ATen op run inside it.

    Pass the tensors you care about by keyword (``watch_ops(x=x)``) so the log
    names them. The log (an :class:`OpLog`) prints as a table and is also data:
    ``log.ops``, ``log.new_bytes``, ``log.kinds()``, and the records themselves.

    >>> import torch
    >>> a = torch.arange(6.)
    >>> with watch_ops(a=a) as log:
    ...     b = a
    >>> len(log)
    0
    >>> with watch_ops(a=a) as log:
    ...     a += 1
    >>> log[0].kind, log[0].target, log[0].version
    ('IN-PLACE', 'a', (0, 1))
    """

    def __init__(self, **named_tensors):
        for name, value in named_tensors.items():
            require_dense_tensor(value, name)
        self.named = named_tensors
        self.log = OpLog()
        self._mode = None

    def __enter__(self) -> OpLog:
        self._mode = _recorder_class()(self.log, self.named)
        self._mode.__enter__()
        return self.log

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
        self.log._settle()
