"""The exercises of notebooks 06-10: autograd graphs, measured memory, the residual connection, ResNet blocks."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import torch
import torch.nn.functional as F

from clonelab.cost import model_clone_cost
from clonelab.exercises._core import (TOLERANCE, Exercise, Unreadable, call_answer, choices, function_exercise,
                                      inplace_error, nbytes_of, numbers, one_of, outcomes, register, snippet,
                                      tells_apart, whole)
from clonelab.exercises.nb01_05 import error_of
from clonelab.graphs import graph_nodes
from clonelab.i18n import gettext as _
from clonelab.memory import measure, saved_for_backward
from clonelab.models import (BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock, SecondCodeBlock, ToyResidual,
                             conv1x1, resnet, toy_residual)

TOY_FIELDS = [f.name for f in dataclasses.fields(ToyResidual)]
SHAPE_09_3 = (8, 64, 32, 32)
MADE_08_3 = {"add": "a + b", "exp": "torch.exp(a)", "bn": "bn(a)", "tanh": "torch.tanh(a)", "leaf": "a", "mul": "a * b"}
SAID_08_3 = {None: "silent", "saved": "backward error", "leaf": "immediate error"}
FORM_08_2 = "a dict with the keys add, exp, bn, tanh, leaf, mul"   # a constant, so that it has a translation
assert FORM_08_2.endswith(", ".join(MADE_08_3))


def _close(a: torch.Tensor | None, b: torch.Tensor | None) -> bool:
    return (a is None) == (b is None) and (a is None or (a.shape == b.shape and torch.allclose(
        a, b, rtol=TOLERANCE, atol=TOLERANCE)))


def _extra_07_3() -> dict[str, int]:
    """The notebook's block with ``x.clone()`` against ``x``: the extra bytes allocated, and saved for backward."""
    x, conv = torch.randn(4, 16, 64, 64), torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
    bn = torch.nn.BatchNorm2d(16)
    runs = []
    for take in (lambda t: t, torch.clone):
        def block(x):
            identity = take(x)
            out = bn(conv(x))
            out += identity
            return out
        block(x)   # a first run, so that lazy set-up is not counted
        with measure() as m:
            block(x)
        runs.append((m.allocated, saved_for_backward(block, x).nbytes))
    return {"allocated": runs[1][0] - runs[0][0], "saved": runs[1][1] - runs[0][1]}


@function_exercise("06.1", "make",
                   "read the node names in the Counter, and how many of each it asks for; graph_nodes(make(a, b)) "
                   "shows what you built")
def _graph_from_counts(answer):
    target = Counter({"AccumulateGrad": 2, "MulBackward0": 1, "SigmoidBackward0": 1, "SumBackward0": 1})
    for shape in [(4,), (2, 2)]:
        a = torch.linspace(0.1, 0.9, 4).reshape(shape).requires_grad_(True)
        b = torch.linspace(-1.0, 1.0, 4).reshape(shape).requires_grad_(True)
        out = call_answer(answer, a, b)
        if out.grad_fn is None:
            return "the result has no grad_fn: build it from a and b with ops autograd records"
        got = graph_nodes(out)
        extra, missing = got - target, target - got
        if extra or missing:
            return "; ".join(_(what) + ": " + ", ".join(f"{n} x{k}" for n, k in nodes.items())
                             for what, nodes in (("your graph has extra nodes", extra), ("it lacks", missing)) if nodes)
    return True


@function_exercise("07.1", "clone_cost", "a clone copies what the tensor shows, not the storage behind it; work out "
                                         "what that is in bytes for any shape and dtype")
def _clone_cost(answer):
    big = torch.ones(100, 100)
    for t in [torch.ones(7), torch.ones(3, 5, dtype=torch.float64),
              big[:2],                                  # a view: 2 rows of a 40,000-byte storage
              big[10:20, 5:50], big[:, ::3],            # a view with gaps between its rows; not dense
              torch.ones(8, 8).t(),                     # transposed, still dense
              torch.ones(1).expand(1000),               # stride 0: 4 bytes of storage, 1000 elements
              torch.arange(24, dtype=torch.int8).view(2, 3, 4).permute(2, 0, 1),
              torch.zeros(0, 3), torch.tensor(2.5), torch.ones(4, 4, dtype=torch.bool)]:
        try:
            got = whole(call_answer(answer, t, returns=None))
        except Unreadable:
            return "clone_cost(t) should return a whole number of bytes"
        if got == t.clone().untyped_storage().nbytes():
            continue
        if got == t.numel():
            return "that counts elements; a clone allocates bytes"
        if got == t.numel() * 4:
            return _("4 bytes per element is right for float32 only; this tensor is {dtype}, whose elements take "
                     "a different number of bytes").format(dtype=t.dtype)
        if got == t.untyped_storage().nbytes():
            return ("for a view or an expanded tensor the storage is not what gets copied: try "
                    "torch.ones(100, 100)[:2] and torch.ones(1).expand(1000) under measure()")
        return False
    return True


@function_exercise("08.1", "fixed_block", "the trouble is the in-place write into x, not the name that points at it")
def _fixed_block(answer):
    # x made five ways, from seeded data; a sigmoid first, so a clone-based answer hears why clone does not help
    for made_by in ["torch.sigmoid(z)", "F.conv2d(z, k, padding=1)", "z * 2.0", "torch.relu(z)", "z"]:
        name = _("x a leaf that requires grad") if made_by == "z" else f"x = {made_by}"
        runs = []
        for block in (lambda x, w: x + w * torch.relu(x), answer):   # what the block means, then the answer
            g = torch.Generator().manual_seed(8)
            leaves = [torch.randn(2, 3, 5, 5, generator=g).requires_grad_(),
                      (torch.randn(3, 3, 3, 3, generator=g) * 0.3).requires_grad_(),
                      torch.tensor(1.5, requires_grad=True)]
            x = eval(made_by, {"torch": torch, "F": F, "z": leaves[0], "k": leaves[1]})   # our own fixed lines
            before = x.detach().clone()
            try:
                out = call_answer(block, x, leaves[2])
                out.sum().backward()
            except RuntimeError as err:
                return _({"leaf": "with {name}, your block raised at once: it writes into x in place",
                          "saved": "with {name}, backward raised: autograd saved x, and the block wrote into it (a "
                                   "clone of x for the skip would not stop that write)"}[inplace_error(err)]
                         ).format(name=name)
            if not torch.equal(x.detach(), before):
                return _("with {name}, the caller's x was changed: the block must leave it alone").format(name=name)
            runs.append((out, leaves))
        (expected, leaves_ref), (out, leaves) = runs
        if not _close(out, expected):
            return _("with {name}, the output is not x + w * relu(x)").format(name=name)
        if not all(_close(a.grad, b.grad) for a, b in zip(leaves, leaves_ref)):
            return _("with {name}, the output is right but the gradients are not").format(name=name)
    return True


class _Writes(torch.nn.Module):
    """A block that runs one fixed line of our own on its input x and returns ``out``."""

    def __init__(self, code: str):
        super().__init__()
        self.code = code

    def forward(self, x):
        ns = {"x": x}
        exec(self.code, ns)
        return ns["out"]


def _blocks_09_2():
    """(description, block, does it write into its input?), with the blocks built from a fixed seed."""
    torch.manual_seed(9)
    return [("BasicBlock(8, 8)", BasicBlock(8, 8), False),
            ("a block that writes in place into its own clone of x", _Writes("out = x.clone(); out.relu_()"), False),
            ("ReluFirstBlock(8, 8) with an in-place ReLU", ReluFirstBlock(8, 8), True),
            ("Bottleneck(8, 2)", Bottleneck(8, 2), False), ("PreActBlock(8, 8)", PreActBlock(8, 8), False),
            ("ReluFirstBlock(8, 8, inplace=False)", ReluFirstBlock(8, 8, inplace=False), False),
            ("a block whose in-place write keeps x's values (x.mul_(1.0))", _Writes("x.mul_(1.0); out = x * 2"), True),
            ("a block that writes into a view of x", _Writes("x[:, :1] = x[:, :1].abs(); out = x + 1"), True)]


@function_exercise("09.1", "writes_into_input", "an in-place op can leave the values as they were; look for something "
                                                "that counts in-place ops on a tensor and its views, not at the values")
def _writes_into_input(answer):
    def hint(description: str, where: str, wrote: bool) -> str:
        said = _(description) + (_(where) if where else "")
        if "keeps x's values" in description:
            return _("wrong for {description}: its values do not change, but it does write into x").format(
                description=said)
        if "a view of x" in description:
            return _("wrong for {description}: a write through a view is a write into x").format(description=said)
        return (_("wrong for {description}: your function says it only read x") if wrote else
                _("wrong for {description}: your function says it wrote into x")).format(description=said)

    x = torch.randn(2, 8, 6, 6, generator=torch.Generator().manual_seed(2))  # negative values: ReLU changes them
    # each block twice: on a fresh x, and on one whose counter is 1 already (a write before the call is not the block's)
    return tells_apart(answer, [((block, make()), wrote, hint(description, where, wrote))
                                for make, where in ((x.clone, ""), (lambda: x.clone().mul_(1.0), ", given an x "
                                                                    "that was written into before the call"))
                                for description, block, wrote in _blocks_09_2()])


def _held_09_3() -> dict[str, int]:
    """The clone's extra memory held after the forward pass, in copies of a small input, times the question's."""
    small, down = torch.randn(2, 64, 8, 8), torch.nn.Sequential(conv1x1(64, 128, 2), torch.nn.BatchNorm2d(128))
    blocks = {"plain": SecondCodeBlock(64, 64), "downsampling": SecondCodeBlock(64, 128, stride=2, downsample=down)}
    return {name: round(model_clone_cost(block, small, repeat=0)["extra_net"] / small.nbytes) * nbytes_of(*SHAPE_09_3)
            for name, block in blocks.items()}


@function_exercise("10.2", "make_fixed_model", "there are two fixes for the ReLU-first block; only one of them stops "
                                               "the write into the block's input")
def _fixed_model(answer):
    model = call_answer(answer, returns=torch.nn.Module, what="the model, an nn.Module")
    # the intended network: every block computes x + F(relu(x)) and only reads x
    reference = resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=16, stem="small", inplace=False)
    try:
        reference.load_state_dict(model.state_dict())
    except RuntimeError:
        return ("build the notebook's network: resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=WIDTH, "
                "stem=\"small\", ...), with the options that fix it")
    inputs = []   # (block name, its input, the input's version as the block starts)
    handles = [m.register_forward_pre_hook(lambda m, args, n=name: inputs.append((n, args[0], args[0]._version)))
               for name, m in model.named_modules() if re.fullmatch(r"layer\d+\.\d+", name)]
    try:
        model.train()   # the reference, just built, is in training mode already
        x = torch.rand(16, 1, 8, 8, generator=torch.Generator().manual_seed(10))
        out, expected = model(x), reference(x)
        out.sum().backward()  # must not raise
    finally:
        for h in handles:
            h.remove()
    overwritten = [name for name, block_input, version in inputs if block_input._version != version]
    if not isinstance(out, torch.Tensor) or out.shape != expected.shape:
        return "the model should return logits of shape (batch, 10)"
    if not _close(out, expected):
        return "the outputs are not those of x + F(relu(x)) in every block: the skip still sees relu(x)"
    if overwritten:
        return _("the outputs are right, but {blocks} still wrote into the block input in place; "
                 "a clone of x for the skip does not stop that write").format(blocks=", ".join(overwritten))
    return True


register(
    Exercise("06.2", hint="draw the graph with show_saved=True and follow the plain line from the second "
                          "MulBackward0 to its 'other' box; or compare that node's _saved_other with `is`",
             form='the name of a field as a string, e.g. "weight1"', parse=one_of(TOY_FIELDS),
             truth=snippet("r = toy_residual('clone', backward=False)", "next(name for name in TOY_FIELDS "
                           "if getattr(r, name) is r.feature2.grad_fn._saved_other)",
                           toy_residual=toy_residual, TOY_FIELDS=TOY_FIELDS)),
    Exercise("07.2", hint="measure() both variants and subtract; then compare saved_for_backward(...).nbytes",
             form='a dict with exactly the keys "allocated" and "saved", each a whole number of bytes',
             parse=numbers(integral=True, names=("allocated", "saved")), truth=_extra_07_3,
             wrong_values=lambda t: {("allocated", nbytes_of(8, 16, 32, 32)):
                                     "that is one copy of the x of the section above; the question's x is "
                                     "torch.randn(4, 16, 64, 64)"},
             wrong_parts={"allocated": "compare what the two forward passes allocate",
                          "saved": "the allocation is right; now count what each variant keeps for backward"}),
    Exercise("08.2", hint='ask of each op: does its backward need its own output? Is x a leaf? Use "silent", '
                          '"backward error" or "immediate error"',
             form=FORM_08_2, parse=outcomes(MADE_08_3, SAID_08_3.values()),
             truth=lambda: {key: SAID_08_3[error_of(f"x = {made}; identity = x; x.relu_(); "
                                                    "(identity + x).sum().backward()", bn=torch.nn.BatchNorm2d(3),
                                                    a=torch.randn(2, 3, 4, 4, requires_grad=True),
                                                    b=torch.randn(2, 3, 4, 4, requires_grad=True))]
                            for key, made in MADE_08_3.items()}),
    Exercise("09.2", hint="the clone lives until the block returns, unless something saved it for backward; look "
                          "at what a convolution saves",
             form="a tuple (plain_block, downsampling_block) of two ints",
             parse=numbers(integral=True, names=("plain", "downsampling")), truth=_held_09_3,
             wrong_values=lambda t: {
                 ("plain", nbytes_of(*SHAPE_09_3)): "the plain block's clone is freed when the block returns: "
                                                    "nothing in its graph refers to it",
                 ("downsampling", 0): "in the downsampling block the clone goes into the shortcut's 1x1 "
                                      "convolution: look at what that convolution keeps",
                 ("downsampling", nbytes_of(*SHAPE_09_3) // 4): "count bytes, not elements"},
             wrong_parts={"plain": "the plain block's entry is not right yet",
                          "downsampling": "the downsampling block's entry is not right yet: start from the size of "
                                          "one copy of the input"}),
    Exercise("10.1", hint="ask of each change: does anything now write into a block's input x before the addition, "
                          "or do the two runs now do different things",
             form='a set of letters, e.g. {"D", "F"}', parse=choices("ABCDEF"),
             truth=lambda: frozenset("ABCE"),   # written down: a test runs the dozen trainings it takes
             wrong_options={"D": "for each of your letters, compare the two runs' blocks: could identity hold "
                                 "something other than the x the block was given when it is added?",
                            "F": "for each of your letters, compare the two runs' setups: is everything but alias "
                                 "against clone the same in both?"}),
)
