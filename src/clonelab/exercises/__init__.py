"""Exercise checks: ``check(exercise_id, answer)``.

Each notebook's exercises live in a module of this package (``nb01``,
``nb02`` ...) and register themselves with :func:`exercise`. A check accepts
every correct answer, answers a wrong one with a hint, and never shows the
solution. It prints its verdict and returns a :class:`Verdict`, which is
truthy when the answer is right, so a solution cell can ``assert`` it.

>>> from clonelab import check
>>> bool(check("demo.1", 4))
✓ demo.1: correct.
True
>>> bool(check("demo.1", 5))
✗ demo.1: not yet. Hint: 2 + 2.
False
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable

# exercise id -> (validator, hint). A validator returns True, False, or a string:
# a more specific hint for this particular wrong answer.
_REGISTRY: dict[str, tuple[Callable[[Any], bool | str], str]] = {}
_loaded = False


def exercise(exercise_id: str, hint: str):
    """Register ``validator(answer)`` under ``exercise_id`` (used by the ``nbNN`` modules).

    >>> @exercise("demo.2", hint="an even number")
    ... def _(answer):
    ...     return isinstance(answer, int) and answer % 2 == 0
    """
    def register(validator: Callable[[Any], bool | str]):
        if exercise_id in _REGISTRY:
            raise ValueError(f"exercise_id {exercise_id!r} is registered twice")
        _REGISTRY[exercise_id] = (validator, hint)
        return validator
    return register


@exercise("demo.1", hint="2 + 2")
def _demo(answer):
    return answer == 4 and not isinstance(answer, bool)


def letters(answer: Any, allowed: str) -> set[str] | None:
    """Read a multiple-choice answer ("A, C", "ac", {"A", "C"}, ["a"]) as a set of capital letters.

    Returns None for anything else, or for a letter outside ``allowed``.

    >>> sorted(letters("a, c", "ABCD")), letters("AZ", "ABCD")
    (['A', 'C'], None)
    """
    if isinstance(answer, str):
        items = [c for c in answer if not c.isspace() and c not in ",;"]
    elif isinstance(answer, (set, frozenset, list, tuple)):
        items = list(answer)
    else:
        return None
    if not all(isinstance(i, str) and len(i.strip()) == 1 for i in items):
        return None
    found = {i.strip().upper() for i in items}
    return found if found <= set(allowed.upper()) else None


def number(value: Any) -> float | None:
    """A real number as a float: an int, a float, a NumPy scalar or a one-element tensor; else None.

    >>> number(3), number(2.5), number(True), number("3")
    (3.0, 2.5, None, None)
    """
    import numbers

    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if type(value).__module__.startswith("torch") and hasattr(value, "numel"):
        if value.numel() == 1 and not value.is_complex() and str(value.dtype) != "torch.bool":
            return float(value.item())
    return None


def whole_number(value: Any) -> int | None:
    """A whole number as an int (200, 200.0, numpy.int64(200), torch.tensor(200)); else None.

    >>> whole_number(200.0), whole_number(2.5), whole_number(False)
    (200, None, None)
    """
    found = number(value)
    return int(found) if found is not None and found.is_integer() else None


def _load_all() -> None:
    global _loaded
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True


def exercise_ids() -> list[str]:
    """Every registered exercise id."""
    _load_all()
    return sorted(_REGISTRY)


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`check`: truthy when correct; ``message`` is what was printed."""

    exercise_id: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        return f"Verdict({self.exercise_id!r}, passed={self.passed})"

    def _ipython_display_(self) -> None:
        # check() already printed the message; showing the Verdict too would repeat it
        pass


def _is_stub(answer: Any) -> bool:
    """A function whose body is still the template's ``...`` (read from its source; False when there is none)."""
    import ast
    import inspect
    import textwrap
    import types

    if not isinstance(answer, types.FunctionType):
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(answer)))
    except (OSError, TypeError, SyntaxError):
        return False
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return False
    body = tree.body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0].value, "value", None), str):
        body = body[1:]  # a docstring
    return bool(body) and all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is ...
                              for s in body)


def _unanswered(answer: Any) -> bool:
    """The template as handed out: ``...`` itself, a dict, list, tuple or set still holding one, or a function
    whose body is still ``...``."""
    if answer is ... or _is_stub(answer):
        return True
    if isinstance(answer, dict):
        return any(v is ... for v in answer.values())
    if isinstance(answer, (list, tuple, set, frozenset)):
        return any(v is ... for v in answer)
    return False


def check(exercise_id: str, answer: Any) -> Verdict:
    """Check ``answer`` for ``exercise_id``; print ✓ or a hint; return a truthy/falsy Verdict.

    An answer left as ``...`` (or a dict, list or tuple still holding a ``...``, or
    a function whose body is still ``...``) gets a reminder, not an error. A validator that
    fails on an odd answer (wrong type, wrong shape) counts as "not yet".

    >>> check("demo.1", ...).passed
    … demo.1: no answer yet. Replace each ... with your answer.
    False
    """
    if not isinstance(exercise_id, str):
        raise TypeError(f"exercise_id must be a string such as '01.1', got {type(exercise_id).__name__}")
    _load_all()
    if exercise_id not in _REGISTRY:
        raise ValueError(f"unknown exercise_id {exercise_id!r}; known ids: {', '.join(sorted(_REGISTRY))}")
    validator, hint = _REGISTRY[exercise_id]
    if _unanswered(answer):
        message = f"… {exercise_id}: no answer yet. Replace each ... with your answer."
        print(message)
        return Verdict(exercise_id, False, message)
    try:
        outcome = validator(answer)
    except Exception as err:  # an answer of the wrong kind is wrong, not a crash
        outcome = f"{hint} (your answer raised {type(err).__name__}: {err})"
    if outcome is True:
        message = f"✓ {exercise_id}: correct."
    else:
        specific = outcome if isinstance(outcome, str) else hint
        end = "" if specific.endswith((".", "?", "!")) else "."   # a hint that asks a question keeps its "?"
        message = f"✗ {exercise_id}: not yet. Hint: {specific}{end}"
    print(message)
    return Verdict(exercise_id, outcome is True, message)
