"""The machinery of the exercise checks: :class:`Exercise`, the registry, the answer parsers, the helpers that
declare exercises, and ``check``. ``nb01_05.py``, ``nb06_10.py`` and ``quiz.py`` declare the exercises with it."""

from __future__ import annotations

import dis
import functools
import numbers as _numbers
import re
import types
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from clonelab.i18n import gettext as _


class Unreadable(Exception):
    """The answer is not of the form the exercise asks for; the message (if any) says what is wrong with it."""


@dataclass(frozen=True)
class Exercise:
    """One exercise: ``parse`` reads an answer (or raises :class:`Unreadable`); ``judge`` runs an answer that is code,
    or ``truth()`` (computed once) is compared with it. A wrong answer gets the first hint that fits: by the whole
    answer, ``wrong_answers(truth)``; for a set, by an option picked or left out wrongly, ``wrong_options``; for a
    dict, by its first wrong part, ``wrong_values(truth)[(part, value)]`` or ``wrong_parts[part]``; else ``hint``."""

    id: str
    hint: str                                   # for a wrong answer without a hint of its own
    form: str                                   # what an answer looks like: "answer with <form>"
    parse: Callable[[Any], Any]
    truth: Callable[[], Any] | None = None
    judge: Callable[[Any], bool | str] | None = None   # instead of truth: runs an answer that is code
    wrong_answers: Callable[[Any], Mapping[Any, str]] = lambda truth: {}
    wrong_options: Mapping[str, str] = field(default_factory=dict)
    wrong_parts: Mapping[str, str] = field(default_factory=dict)
    wrong_values: Callable[[Any], Mapping[tuple[str, Any], str]] = lambda truth: {}
    form_name: str = ""                          # for a ``form`` with a {name} field: the function's name


_REGISTRY: dict[str, Exercise] = {}
_TRUTHS: dict[str, Any] = {}


def register(*exercises: Exercise) -> None:
    """Add exercises to the registry; an id may appear once."""
    for ex in exercises:
        if ex.id in _REGISTRY:
            raise ValueError(f"exercise_id {ex.id!r} is registered twice")
        _REGISTRY[ex.id] = ex


def exercise_ids() -> list[str]:
    """Every registered exercise id."""
    return sorted(_REGISTRY)


def number(answer: Any, integral: bool = False) -> float | int:
    """Parser: one real number (or a one-element tensor or array; not a bool), a float; with ``integral``, an int."""
    if hasattr(answer, "flatten") and len(flat := answer.flatten()[:2].tolist()) == 1:   # a one-element tensor or array
        answer = flat[0]
    if not isinstance(answer, _numbers.Real) or isinstance(answer, bool) or integral and not float(answer).is_integer():
        raise Unreadable
    return int(answer) if integral else float(answer)


whole: Callable[[Any], int] = functools.partial(number, integral=True)   # parser: one whole number, as an int


def numbers(n: int | None = None, *, integral: bool = False, names: tuple[str, ...] = ()) -> Callable:
    """Parser: n numbers (None: any count) from a sequence, tensor or array, as a tuple; with ``names``, a dict.

    >>> numbers(2, integral=True, names=("a", "b"))([3.0, 4])
    {'a': 3, 'b': 4}
    """
    def parse(answer):
        if isinstance(answer, Mapping) and names and set(answer) == set(names):
            answer = [answer[k] for k in names]
        elif hasattr(answer, "flatten"):   # tensors, NumPy arrays
            answer = answer.flatten().tolist()
        if isinstance(answer, (str, bytes, Mapping, Set)) or not isinstance(answer, Iterable):   # a set has no order
            raise Unreadable
        values = [number(v, integral) for v in answer]
        if len(values) != (len(names) or n or len(values)):
            raise Unreadable
        return dict(zip(names, values)) if names else tuple(values)
    return parse


def _key(text: str) -> str:
    """Labels compare without spaces, case or surrounding brackets: "(B)" is "b", "x[:,::2]" is "x[:, ::2]"."""
    text = "".join(text.split()).casefold()
    return text[1:-1] if re.fullmatch(r"\(.*\)", text) else text


def _matched_option(item: Any, options: Iterable[str]) -> str:
    by_key = {_key(o): o for o in options}
    if not isinstance(item, str) or _key(item) not in by_key:
        raise Unreadable(_("{item} is not one of the options: {options}").format(
            item=repr(item), options=", ".join(by_key.values())))
    return by_key[_key(item)]


def choices(options: Iterable[str]) -> Callable:
    """Parser: a set of options (a set, list or tuple of labels; with one-letter options also a string "A, C").

    >>> sorted(choices("ABCD")("a, c")), sorted(choices(["relu", "exp"])({" Exp"}))
    (['A', 'C'], ['exp'])
    """
    def parse(answer):
        if isinstance(answer, str) and all(len(o) == 1 for o in options):
            answer = [c for c in answer if not c.isspace() and c not in ",;()"]
        if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
            raise Unreadable
        return frozenset(_matched_option(item, options) for item in answer)
    return parse


def one_of(options: Iterable[str]) -> Callable:
    """Parser: one option, by its label."""
    return lambda answer: _matched_option(answer, options)


def outcomes(keys: Iterable[str], values: Iterable[str]) -> Callable:
    """Parser: a dict with exactly ``keys``, each mapped to one of ``values``."""
    keys, values = list(keys), list(values)

    def parse(answer):
        if not isinstance(answer, Mapping):
            raise Unreadable
        given = {_matched_option(k, keys): _matched_option(v, values) for k, v in answer.items()}
        if len(given) != len(keys) or len(answer) != len(keys):   # a key missing, or two spellings of one key
            raise Unreadable(_("the keys should be exactly {keys}").format(keys=keys))
        return given
    return parse


def inplace_error(err: BaseException) -> str:
    """Which in-place error ``err`` is: "leaf" (a write into a leaf that requires grad) or "saved"; else raise it."""
    for kind, words in (("leaf", "leaf Variable"), ("saved", "modified by an inplace operation")):
        if words in str(err):
            return kind
    raise err


def function(answer: Any) -> Callable:
    """Parser: a function (the function itself, not a call of it, and not a model)."""
    if not callable(answer) or isinstance(answer, torch.nn.Module):
        raise Unreadable
    return answer


TOLERANCE = 1e-5  # absolute and relative, for float32 outputs and gradients


def nbytes_of(*shape: int) -> int:
    return torch.empty(shape, device="meta").nbytes


def snippet(code: str, result: str, **names: Any) -> Callable[[], Any]:
    """A truth: run ``code`` (an exercise's own lines, as the notebook shows them) and evaluate ``result``."""
    def truth():
        ns = {"torch": torch, "F": F, **names}
        exec(code, ns)   # our own fixed lines, never an answer
        return eval(result, ns)
    return truth


def function_exercise(exercise_id: str, name: str, hint: str, judge: Callable | None = None) -> Callable:
    """Register ``judge`` (or the decorated function) for ``exercise_id``, whose answer is the function ``name``."""
    def add(judge: Callable[[Callable], bool | str]):
        register(Exercise(exercise_id, hint=hint, form="the function {name} itself (no parentheses)",
                          form_name=name, parse=function, judge=judge))
        return judge
    return add(judge) if judge else add


def call_answer(fn: Callable, *args, returns: type | tuple | None = torch.Tensor, what: str = "a tensor") -> Any:
    """``fn(*args)``, which must return a ``returns`` (``what``; None: anything); else Unreadable says so."""
    result = fn(*args)
    if result is ...:
        raise Unreadable(_("your function still returns ...: replace it with your code"))
    if returns is not None and not isinstance(result, returns):
        raise Unreadable(_("your function should return {what}, not {type}").format(what=_(what),
                                                                                     type=type(result).__name__))
    return result


def tells_apart(answer, cases) -> bool | str:
    """02.1, 09.1: the answer must return True or False for each (arguments, right bool, hint when wrong)."""
    for args, expected, hint in cases:
        got = call_answer(answer, *args, returns=(bool, np.bool_, torch.Tensor), what="True or False")
        if isinstance(got, torch.Tensor) and (got.numel() != 1 or got.dtype != torch.bool):
            raise Unreadable(_("your function should return True or False"))
        if bool(got) != expected:
            return hint
    return True


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`check`: truthy when correct; ``message`` is what was printed."""

    exercise_id: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def _ipython_display_(self) -> None:
        pass   # check() already printed the message; showing the Verdict too would repeat it


def _instructions(fn: Callable) -> list[tuple[str, Any]]:
    return [(i.opname, i.argval) for i in dis.get_instructions(fn)]


_STUBS = [_instructions(f) for f in (lambda: None, lambda: ...)]   # what a body of ..., pass or return ... runs


def _unanswered(answer: Any) -> bool:
    """The template as handed out: ``...``, None, a container holding a ``...``, a ``def`` whose body does nothing."""
    if answer is None or answer is ... or (isinstance(answer, str) and answer.strip() == "..."):
        return True
    if isinstance(answer, (dict, list, tuple, set, frozenset)):
        return any(v is ... for v in (answer.values() if isinstance(answer, dict) else answer))
    return (isinstance(answer, types.FunctionType) and answer.__name__ != "<lambda>"   # a lambda is an answer
            and _instructions(answer) in _STUBS)


def _compare(ex: Exercise, given: Any) -> bool | str:
    """True, or the hint for a wrong answer: its own, the one for a wrong option or part, or what kind of wrong."""
    if ex.id not in _TRUTHS:
        torch.manual_seed(0)   # inside check's fork_rng: a truth that draws random tensors is the same every time
        _TRUTHS[ex.id] = ex.truth()
    truth = _TRUTHS[ex.id]
    if given == truth:
        return True
    by_answer = ex.wrong_answers(truth)
    if not isinstance(given, dict) and given in by_answer:   # a dict is not hashable; its parts are, below
        return by_answer[given]
    if isinstance(truth, frozenset):
        hint = next((h for k, h in ex.wrong_options.items() if k in given ^ truth), None)
        # what is wrong, never how many: a count would turn the exercise into elimination
        wrong = [what for what, found in ((_("something in your set does not belong"), given - truth),
                                          (_("something is missing"), truth - given)) if found]
        return _(hint) if hint else _(" and ").join(wrong) + "; " + _(ex.hint)
    if isinstance(truth, dict):
        bad, by_value = [k for k in truth if given[k] != truth[k]], ex.wrong_values(truth)
        hint = next(filter(None, (by_value.get((k, given[k])) or ex.wrong_parts.get(k) for k in bad)), None)
        if hint:
            return _(hint)
        wrong = _("{bad} of the {all} is not right yet") if len(bad) == 1 else _("{bad} of the {all} are not right yet")
        return wrong.format(bad=len(bad), all=len(truth)) + "; " + _(ex.hint)
    return False


def check(exercise_id: str, answer: Any) -> Verdict:
    """Check ``answer`` for ``exercise_id``: print ✓ or a hint, and return a :class:`Verdict`, truthy when right.
    A template as handed out gets a reminder, an answer that breaks the check is "not yet"; the RNG is left alone.

    >>> check("demo.1", ...).passed
    … demo.1: no answer yet. Replace each ... with your answer.
    False
    """
    if not isinstance(exercise_id, str):
        raise TypeError(f"exercise_id must be a string such as '01.1', got {type(exercise_id).__name__}")
    if exercise_id not in _REGISTRY:
        raise ValueError(f"unknown exercise_id {exercise_id!r}; known ids: {', '.join(sorted(_REGISTRY))}")
    ex = _REGISTRY[exercise_id]
    if _unanswered(answer):
        message = "… " + _("{id}: no answer yet. Replace each ... with your answer.").format(id=exercise_id)
    elif (outcome := _outcome(ex, answer)) is True:
        message = "✓ " + _("{id}: correct.").format(id=exercise_id)
    else:
        # a hint made when the answer was judged is in the language already; a fixed one is translated here
        specific = _(outcome if isinstance(outcome, str) and outcome else ex.hint)
        end = "" if specific.endswith((".", "?", "!")) else "."   # a hint that asks a question keeps its "?"
        message = "✗ " + _("{id}: not yet. Hint: {hint}").format(id=exercise_id, hint=specific + end)
    print(message)
    return Verdict(exercise_id, message.startswith("✓"), message)


def _outcome(ex: Exercise, answer: Any) -> bool | str:
    try:
        with torch.random.fork_rng(devices=[]):   # the exercise's own seeds leave the reader's RNG alone
            given = ex.parse(answer)
            return ex.judge(given) if ex.judge else _compare(ex, given)
    except Unreadable as err:
        form = _(ex.form).format(name=ex.form_name) if ex.form_name else _(ex.form)
        return str(err) or _("answer with {form}").format(form=form)
    except Exception as err:  # an answer of the wrong kind is wrong, not a crash
        first = str(err).split(". ")[0]   # the rest of an error message may suggest the fix: leave that out
        return _(ex.hint) + " " + _("(your answer raised {error}: {first})").format(error=type(err).__name__,
                                                                                     first=first)


register(Exercise("demo.1", hint="2 + 2", form="a whole number", parse=whole, truth=lambda: 2 + 2))
