"""Checks for the quiz of notebook 11 (``quiz.1`` ... ``quiz.11``), one question per idea of the series.

Where the right answer is a fact about PyTorch that is cheap to compute, the
check computes it by running PyTorch, so it stays right if a release changes
the behaviour. One answer is written down instead: ``quiz.10`` asks *why*
(a choice between explanations); tests/test_exercises_quiz.py checks it
against what PyTorch does.

>>> from clonelab import check
>>> bool(check("quiz.2", [0.0, 0.0, 0.0]))  # doctest: +ELLIPSIS
✗ quiz.2: not yet. Hint: ...
False
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from typing import Any, Callable

from clonelab.exercises import exercise, number, whole_number

TOLERANCE = 1e-6  # absolute, for float32 gradients of values near 1


# --- answer parsing ----------------------------------------------------------


def _key(text: str) -> str:
    """Labels compare without spaces, so "x[:,::2]" matches "x[:, ::2]"."""
    return "".join(text.split())


def _labels(answer: Any, options: Iterable[str], example: str) -> set[str] | str:
    """The canonical labels an answer picks from ``options``, or a hint string."""
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        return f"answer with a set of labels from the list, e.g. {example}"
    by_key = {_key(o): o for o in options}
    chosen = set()
    for item in answer:
        if not isinstance(item, str):
            return f"every item should be a label from the list (a str), got {item!r}"
        if _key(item) not in by_key:
            return f"{item!r} is not one of the listed labels"
        chosen.add(by_key[_key(item)])
    return chosen


def _compare_sets(chosen: set[str], truth: set[str]) -> bool | str:
    if chosen == truth:
        return True
    extra, missing = len(chosen - truth), len(truth - chosen)
    parts = []
    if extra:
        parts.append(f"{extra} of your labels {'does' if extra == 1 else 'do'} not belong")
    if missing:
        parts.append(f"{missing} label{'' if missing == 1 else 's'} {'is' if missing == 1 else 'are'} missing")
    return " and ".join(parts)


def _numbers(answer: Any, n: int, what: str) -> list[float] | str:
    import torch

    if isinstance(answer, torch.Tensor):
        answer = answer.detach().flatten().tolist()
    elif hasattr(answer, "tolist") and not isinstance(answer, (str, bytes)):  # NumPy arrays
        answer = answer.tolist()
    if isinstance(answer, (str, bytes, Mapping)) or not isinstance(answer, Iterable):
        return f"answer with {what}"
    values = [number(v) for v in answer]
    if len(values) != n or any(v is None for v in values):
        return f"answer with {what}"
    return values


def _letter(answer: Any, letters: str) -> str | None:
    if not isinstance(answer, str):
        return None
    text = answer.strip().strip("()").strip().lower()
    return text if len(text) == 1 and text in letters else None


# --- quiz.1 (notebook 01): which are leaves? ---------------------------------


def _leaves() -> set[str]:
    import torch

    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    made = {"b": a.clone(), "c": a, "d": a.detach()}
    return {name for name, t in made.items() if t.is_leaf}


@exercise("quiz.1", hint="a tensor is a leaf when autograd recorded no op that made it; "
                         "read notebook 01's section on leaves again")
def _quiz_1(answer):
    chosen = _labels(answer, ["b", "c", "d"], '{"b"}')
    if isinstance(chosen, str):
        return chosen
    return _compare_sets(chosen, _leaves())


# --- quiz.2 (notebook 02): one tensor or two? --------------------------------


def _quiz_2_truth() -> list[float]:
    import torch

    x = torch.zeros(3)
    y = x
    y += 1
    y = y * 2
    y[0] = 5
    return x.tolist()


@exercise("quiz.2", hint="follow which tensor the name y points to after each line; "
                         "only some lines write into the tensor that x names")
def _quiz_2(answer):
    values = _numbers(answer, 3, "the three values of x, e.g. [0.0, 0.0, 0.0]")
    if isinstance(values, str):
        return values
    truth = _quiz_2_truth()
    if values == truth:
        return True
    if values[0] == 5:
        return "y[0] = 5 writes into the tensor that y names at that moment; check which tensor that is"
    if values == [2 * v for v in truth]:
        return "y = y * 2 makes a new tensor and moves the name y; x is not touched by it"
    if values == [0.0, 0.0, 0.0]:
        return "y += 1 is not y = y + 1 for a tensor"
    return False


# --- quiz.3 (notebook 03): views or copies? ----------------------------------

_QUIZ_3: dict[str, Callable[[Any], Any]] = {
    "x[1]": lambda x: x[1],
    "x[:, ::2]": lambda x: x[:, ::2],
    "x[[0, 2]]": lambda x: x[[0, 2]],
    "x.reshape(4, 3)": lambda x: x.reshape(4, 3),
    "x.t().reshape(12)": lambda x: x.t().reshape(12),
    "x.detach()": lambda x: x.detach(),
    "x + 0": lambda x: x + 0,
    "x.expand(2, 3, 4)": lambda x: x.expand(2, 3, 4),
    "x[x > 5]": lambda x: x[x > 5],
}


def _quiz_3_truth() -> set[str]:
    import torch

    from clonelab.inspection import shares_storage

    truth = set()
    for label, op in _QUIZ_3.items():
        x = torch.arange(12.0).view(3, 4)
        if shares_storage(op(x), x):
            truth.add(label)
    return truth


@exercise("quiz.3", hint="a view only changes shape, stride and offset; a copy is needed when no single "
                         "stride per dimension can describe the result, or when the indices are data")
def _quiz_3(answer):
    chosen = _labels(answer, _QUIZ_3, '{"x[1]"}')
    if isinstance(chosen, str):
        return chosen
    return _compare_sets(chosen, _quiz_3_truth())


# --- quiz.4 (notebook 04): which lines write into x? -------------------------


def _quiz_4_forms() -> dict[str, Callable[[Any], None]]:
    import torch
    import torch.nn.functional as F

    def iadd(x):
        x += 1

    def rebind(x):
        x = x + 1  # noqa: F841  (the point: only the local name moves)

    def set_item(x):
        x[0] = 1.0

    return {
        "x += 1": iadd,
        "x = x + 1": rebind,
        "x.add_(1)": lambda x: x.add_(1),
        "x.add(1)": lambda x: x.add(1),
        "torch.add(x, 1, out=x)": lambda x: torch.add(x, 1, out=x),
        "x[0] = 1": set_item,
        "F.relu(x, inplace=True)": lambda x: F.relu(x, inplace=True),
        "x.detach().zero_()": lambda x: x.detach().zero_(),
        "x.clone().zero_()": lambda x: x.clone().zero_(),
    }


def _quiz_4_truth() -> set[str]:
    import torch

    truth = set()
    for label, form in _quiz_4_forms().items():
        x = torch.tensor([-2.0, -1.0, 0.0, 1.0])
        form(x)
        if x._version > 0:
            truth.add(label)
    return truth


@exercise("quiz.4", hint="a write into x changes the memory x names; a new tensor, or a rebound name, does not. "
                         "Ask of each line which memory it writes to")
def _quiz_4(answer):
    chosen = _labels(answer, _quiz_4_forms(), '{"x += 1"}')
    if isinstance(chosen, str):
        return chosen
    return _compare_sets(chosen, _quiz_4_truth())


# --- quiz.5 (notebook 05): .data, detach(), in place, out of place -----------

_QUIZ_5_OUTCOMES = ("error", "wrong gradient", "right gradient")


def _quiz_5_outcome(write: str) -> str:
    import torch

    x = torch.linspace(-2.0, 2.0, 5, requires_grad=True)
    y = x.sigmoid()
    if write == "y.data.mul_(2)":
        y.data.mul_(2)
    elif write == "y.detach().mul_(2)":
        y.detach().mul_(2)
    elif write == "y.mul_(2)":
        y.mul_(2)
    else:  # "y = y * 2"
        y = y * 2
    try:
        y.sum().backward()
    except RuntimeError as err:
        if "modified by an inplace operation" in str(err):
            return "error"
        raise
    s = torch.sigmoid(x.detach())
    meant = 2 * s * (1 - s)  # the gradient of what the code returns: (2 * sigmoid(x)).sum()
    return "right gradient" if torch.allclose(x.grad, meant, rtol=0, atol=TOLERANCE) else "wrong gradient"


_QUIZ_5_KEYS = ("y.data.mul_(2)", "y.detach().mul_(2)", "y.mul_(2)", "y = y * 2")


@exercise("quiz.5", hint="for each line, decide whether it writes into the tensor sigmoid saved, and whether "
                         "autograd's version counter sees that write")
def _quiz_5(answer):
    if not isinstance(answer, Mapping):
        return f"answer with a dict with the keys {list(_QUIZ_5_KEYS)}"
    by_key = {_key(k): k for k in _QUIZ_5_KEYS}
    given = {}
    for k, v in answer.items():
        if not isinstance(k, str) or _key(k) not in by_key:
            return f"the keys should be exactly {list(_QUIZ_5_KEYS)}; {k!r} is not one of them"
        given[by_key[_key(k)]] = v.strip().lower() if isinstance(v, str) else v
    if set(given) != set(_QUIZ_5_KEYS):
        return f"the keys should be exactly {list(_QUIZ_5_KEYS)}"
    bad = [k for k, v in given.items() if v not in _QUIZ_5_OUTCOMES]
    if bad:
        return f'every value should be "error", "wrong gradient" or "right gradient" (check {", ".join(bad)})'
    wrong = sum(given[k] != _quiz_5_outcome(k) for k in _QUIZ_5_KEYS)
    return True if not wrong else f"{wrong} of the 4 are not right yet"


# --- quiz.6 (notebook 06): what clone adds to the graph ----------------------


def _quiz_6_truth() -> dict[str, int]:
    from clonelab.graphs import graph_nodes
    from clonelab.models import toy_residual

    diff = graph_nodes(toy_residual("clone").loss) - graph_nodes(toy_residual("alias").loss)
    return dict(diff)


@exercise("quiz.6", hint="count the node classes of both graphs with graph_nodes (a Counter) and subtract")
def _quiz_6(answer):
    if not isinstance(answer, Mapping):
        return 'answer with a dict {node class name: how many more}, e.g. {"MulBackward0": 1}'
    given = {}
    for k, v in answer.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, numbers.Integral):
            return "the keys should be node class names (str) and the values whole numbers"
        if v:
            given[k.strip()] = int(v)
    truth = _quiz_6_truth()
    if given == truth:
        return True
    if any(not name.endswith(("Backward0", "AccumulateGrad")) for name in given):
        return "use the class names that graph_nodes prints, such as MulBackward0"
    return False


# --- quiz.7 (notebook 07): what a clone of a view costs ----------------------


def _quiz_7_truth() -> tuple[int, int]:
    import torch

    from clonelab.memory import saved_for_backward

    x = torch.zeros(1000, 1000, requires_grad=True)
    report = saved_for_backward(lambda t: t[:, :10].clone(), x)
    return report.result.nbytes, report.nbytes


@exercise("quiz.7", hint="a clone allocates room for the elements it copies; what clone's backward "
                         "formula needs is in derivatives.yaml")
def _quiz_7(answer):
    values = _numbers(answer, 2, "a tuple of two whole numbers of bytes, e.g. (100, 0)")
    if isinstance(values, str):
        return values
    if any(v != math.floor(v) for v in values):
        return "bytes are whole numbers"
    allocated, saved = _quiz_7_truth()
    if values[0] == 1000 * 1000 * 4:
        return "that is the size of x's whole storage; the clone copies only what the view shows"
    if values[0] != allocated:
        return "the first number is not right yet: elements times bytes per element"
    if values[1] != saved:
        return "the allocation is right; for the second number, look up what clone's backward formula needs"
    return True


# --- quiz.8 (notebook 08): the post's model with an in-place write -----------


def _quiz_8_output(use_clone: bool) -> float:
    import torch

    input_data = torch.tensor([1.0])
    weight1 = torch.tensor([2.0], requires_grad=True)
    weight2 = torch.tensor([3.0], requires_grad=True)
    feature = weight1 * input_data
    identity = feature.clone() if use_clone else feature
    feature.mul_(2)
    feature2 = weight2 * feature
    output_data = identity + feature2
    return output_data.item()


@exercise("quiz.8", hint="write down what identity holds at the moment of the addition, in each version")
def _quiz_8(answer):
    values = _numbers(answer, 2, "a tuple (output with the alias, output with the clone) of two numbers")
    if isinstance(values, str):
        return values
    alias, clone = _quiz_8_output(False), _quiz_8_output(True)
    if values == [clone, alias]:
        return "the order is (alias, clone)"
    if values[0] == values[1]:
        return "mul_ writes into feature; check whether identity sees that write in both versions"
    if math.isclose(values[0], alias) and math.isclose(values[1], clone):
        return True
    return False


# --- quiz.9 (notebooks 03, 04, 08): which blocks need the clone? -------------


def _quiz_9_blocks() -> dict[str, Callable[..., Any]]:
    import torch
    import torch.nn.functional as F

    kernel = torch.randn(3, 3, 3, 3, generator=torch.Generator().manual_seed(9)) * 0.3

    def conv(t):
        return F.conv2d(t, kernel, padding=1)

    def bn(t):
        return F.batch_norm(t, None, None, training=True)

    def a(x, take):
        identity = take(x)
        out = bn(conv(x))
        out += identity
        return F.relu(out, inplace=True)

    def b(x, take):
        identity = take(x)
        out = conv(F.relu(x, inplace=True))
        out += identity
        return out

    def c(x, take):
        identity = take(x)
        x = x * 0.5
        out = conv(x)
        return out + identity

    def d(x, take):
        identity = take(x)
        x *= 0.5
        out = conv(x)
        return out + identity

    def e(x, take):
        identity = take(x)
        x[:, 0] = 0.0
        out = conv(x)
        return out + identity

    return {"A": a, "B": b, "C": c, "D": d, "E": e}


def _quiz_9_truth() -> set[str]:
    import torch

    differ = set()
    for label, block in _quiz_9_blocks().items():
        outs = []
        for take in (lambda t: t, lambda t: t.clone()):
            x = torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(19))
            outs.append(block(x, take))
        if not torch.equal(*outs):
            differ.add(label)
    return differ


@exercise("quiz.9", hint="identity = x breaks only when something writes into x (or into a view of it) "
                         "before the addition; rebinding the name x writes nothing")
def _quiz_9(answer):
    if isinstance(answer, str) or not isinstance(answer, Iterable) or isinstance(answer, Mapping):
        return 'answer with a set of letters, e.g. {"A"}'
    letters = set()
    for item in answer:
        letter = _letter(item, "abcde")
        if letter is None:
            return f"every item should be one of the letters A to E, got {item!r}"
        letters.add(letter.upper())
    return _compare_sets(letters, _quiz_9_truth())


# --- quiz.10 (notebook 09): why torchvision's out += identity is safe --------

_QUIZ_10_WRONG = {
    "a": "identity = x makes no copy at all (notebook 01)",
    "c": "on a tensor, += calls __iadd__, which runs add_ and writes in place (notebook 04)",
    "d": "autograd checks the versions of saved tensors wherever the op runs, inside a module or not (notebook 05)",
}


@exercise("quiz.10", hint="look at what each node of the block saved for backward (saved_by_node)")
def _quiz_10(answer):
    letter = _letter(answer, "abcd")
    if letter is None:
        return 'answer with one letter, "a", "b", "c" or "d"'
    return _QUIZ_10_WRONG.get(letter, True)


# --- quiz.11 (notebook 09): what a clone still holds after the forward pass ----------

QUIZ_11_SHAPE = (4, 3, 32, 32)  # the batch of images in the question


def _downsampling_inputs() -> dict[str, int]:
    """nbytes of the input of every downsampling BasicBlock of resnet18 on QUIZ_11_SHAPE, from shapes alone.

    These are the clones still held after the forward pass because clonelab's block passes the clone to its
    shortcut convolution (``self.downsample(identity)``), which saves it for backward. torchvision's block
    calls ``self.downsample(x)``; a clone there would be freed inside the block, and nothing would be held.
    """
    import torch

    from clonelab.cost import block_inputs
    from clonelab.models import BasicBlock, resnet

    net = resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000).to("meta")  # no memory, no compute
    sizes = block_inputs(net, torch.empty(*QUIZ_11_SHAPE, device="meta"))
    return {name: n for name, n in sizes.items() if net.get_submodule(name).downsample is not None}


@exercise("quiz.11", hint="a block's clone outlives the block only if some backward node saved it; "
                          "look for the blocks that feed the clone into a convolution")
def _quiz_11(answer):
    given = whole_number(answer)
    if given is None:
        return "answer with a whole number of bytes (an int)"
    held = _downsampling_inputs()
    total = sum(held.values())
    if given == total:
        return True
    if given == 0:
        return "some clones are still alive after the forward pass: count the ones that a backward node saved"
    if given * 4 == total:
        return "count bytes, not elements (float32: 4 bytes each)"
    if given in held.values():
        return "that is one block's clone; count every block whose clone is still held"
    return "not right yet: add up the inputs of the blocks whose clone is still held"
