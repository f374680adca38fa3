"""The exercises with one right answer, as data. Each ``truth`` runs the exercise's own code in PyTorch, so a
check stays right if a release changes what an op does. Two answers are written down instead, each with a test
that runs PyTorch: ``10.1`` (its truth is a dozen training runs) and ``quiz.10`` (a choice between explanations).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

import torch
import torch.nn.functional as F

from clonelab.cost import block_inputs, model_clone_cost
from clonelab.exercises._core import (Exercise, choices, inplace_error, node_counts, numbers, one_of, outcomes,
                                      register, whole)
from clonelab.graphs import graph_nodes
from clonelab.inspection import shares_storage
from clonelab.memory import measure, saved_for_backward
from clonelab.models import BasicBlock, SecondCodeBlock, ToyResidual, conv1x1, resnet, toy_residual


def _nbytes(*shape: int) -> int:
    return torch.empty(shape, device="meta").nbytes


def _snippet(code: str, result: str, **names: Any) -> Callable[[], Any]:
    """A truth: run ``code`` (an exercise's own lines, as the notebook shows them) and evaluate ``result``."""
    def truth():
        ns = {"torch": torch, "F": F, **names}
        exec(code, ns)   # our own fixed lines, never an answer
        return eval(result, ns)
    return truth


def _error(code: str, **names: Any) -> str | None:
    """Run ``code``: None, or which of autograd's in-place errors it raised ("leaf" or "saved")."""
    try:
        _snippet(code, "None", **names)()
    except RuntimeError as err:
        return inplace_error(err)
    return None


def _written(lines: list[str] | dict[str, str], make: Callable[[], torch.Tensor]) -> frozenset[str]:
    """The lines (by label) that, run on a fresh ``x = make()``, bump ``x._version``: a write into x."""
    lines = lines if isinstance(lines, dict) else {line: line for line in lines}
    return frozenset(label for label, code in lines.items() if _snippet(code, "x._version", x=make())())


def _after_write(op: Callable, line: str) -> str:
    """``y = op(x, w)``, then ``line`` (which doubles y), then ``y.sum().backward()``: "error" for the
    version-counter error, else whether x's gradient is that of ``(2 * op(x, w)).sum()``."""
    x = torch.linspace(-2.0, 2.0, 5, requires_grad=True)
    w = torch.linspace(0.5, 1.5, 5, requires_grad=True)
    if _error(line + "; y.sum().backward()", y=op(x, w)):
        return "error"
    meant, = torch.autograd.grad((2 * op(x, w)).sum(), x)
    return "right gradient" if torch.allclose(x.grad, meant, rtol=0, atol=1e-6) else "wrong gradient"


def _extra_07_3() -> dict[str, int]:
    """The notebook's block (the identity first, added in place at the end) with ``x.clone()`` against ``x``: the
    extra bytes allocated in the forward pass, and saved for backward."""
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


def _held_09_3() -> dict[str, int]:
    """What the clone adds to the memory held after the forward pass, measured on a small batch as a number of
    copies of the input (0 or 1), times the question's input."""
    small, down = torch.randn(2, 64, 8, 8), torch.nn.Sequential(conv1x1(64, 128, 2), torch.nn.BatchNorm2d(128))
    blocks = {"plain": SecondCodeBlock(64, 64), "downsampling": SecondCodeBlock(64, 128, stride=2, downsample=down)}
    return {name: round(model_clone_cost(block, small, repeat=0)["extra_net"] / small.nbytes) * _nbytes(*SHAPE_09_3)
            for name, block in blocks.items()}


@functools.cache
def _block_inputs(*shape: int) -> tuple[tuple[int, bool], ...]:
    """(bytes of its input, does it downsample) for each block of ResNet-18 on a batch of ``shape``, from one
    forward pass without grad. The post's second code feeds its clone to the shortcut convolution, which saves it."""
    net = resnet(SecondCodeBlock, [2, 2, 2, 2], num_classes=1000)  # real tensors: the meta device's first use is slower
    sizes = block_inputs(net, torch.zeros(*shape))
    return tuple((n, net.get_submodule(name).downsample is not None) for name, n in sizes.items())


def _wrong_09_1(total: int) -> dict[int, str]:
    blocks = _block_inputs(*SHAPE_09_1)
    return {**dict.fromkeys((n for n, _ in blocks), "that is the input of one block; every block clones its own input"),
            total // 4: "that looks like a number of elements; the question asks for bytes (float32: 4 bytes each)",
            _nbytes(*SHAPE_09_1) * len(blocks): "the blocks' inputs are not the images: the stem changes their shape "
                                                "before the first block",
            sum(n for n, down in blocks if down) + blocks[-1][0]: "that is the extra at the peak; the question asks "
                                                                  "for the total allocated"}


def _differ_quiz_9() -> frozenset[str]:
    """The blocks whose output differs between ``identity = x`` and ``identity = x.clone()``."""
    kernel = torch.randn(3, 3, 3, 3, generator=torch.Generator().manual_seed(9)) * 0.3
    tools = {"conv": lambda t: F.conv2d(t, kernel, padding=1),
             "bn": lambda t: F.batch_norm(t, None, None, training=True)}
    outs = {(label, take): _snippet(f"identity = {take}; " + code, "out", **tools,
                                    x=torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(19)))()
            for label, code in QUIZ_9.items() for take in ("x", "x.clone()")}
    return frozenset(label for label in QUIZ_9 if not torch.equal(outs[label, "x"], outs[label, "x.clone()"]))


SHAPE_09_1, SHAPE_09_3, QUIZ_11_SHAPE = (8, 3, 224, 224), (8, 64, 32, 32), (4, 3, 32, 32)
TOY_FIELDS = [f.name for f in dataclasses.fields(ToyResidual)]
_POST = ("input_data = torch.tensor([1.0]); weight1 = torch.tensor([2.0], requires_grad=True); "
         "weight2 = torch.tensor([3.0], requires_grad=True); feature = weight1 * input_data; ")
_POST_08_1 = {skip: _snippet(_POST + f"out = {skip} + weight2 * feature; ((out - 8.5) ** 2).sum().backward()",
                              "{'output': out.item(), 'weight1_grad': weight1.grad.item()}")
              for skip in ("feature", "input_data")}
_POST_QUIZ_8 = "identity = {}; feature.mul_(2); out = identity + weight2 * feature"
LINES_04_2 = {"A": "x = x * 2", "B": "x *= 2", "C": "x[:, 0] = 0", "D": "x.t().add_(1)", "E": "x.clamp(min=0)",
              "F": "torch.exp(x, out=x)", "G": "y = x.detach(); y.zero_()", "H": "y = x.clone(); y.zero_()"}
OPS_05_1 = {"relu": lambda x, w: x.relu(), "sigmoid": lambda x, w: x.sigmoid(), "exp": lambda x, w: x.exp(),
            "tanh": lambda x, w: x.tanh(), "sin": lambda x, w: x.sin(), "square": lambda x, w: x ** 2,
            "mul": lambda x, w: x * w, "add": lambda x, w: x + w, "clone": lambda x, w: x.clone()}
MADE_08_3 = {"add": "a + b", "exp": "torch.exp(a)", "bn": "bn(a)", "tanh": "torch.tanh(a)", "leaf": "a",
             "mul": "a * b"}
SAID_08_3 = {None: "silent", "saved": "backward error", "leaf": "immediate error"}
QUIZ_3 = ["x[1]", "x[:, ::2]", "x[[0, 2]]", "x.reshape(4, 3)", "x.t().reshape(12)", "x.detach()", "x + 0",
          "x.expand(2, 3, 4)", "x[x > 5]"]
QUIZ_4 = ["x += 1", "x = x + 1", "x.add_(1)", "x.add(1)", "torch.add(x, 1, out=x)", "x[0] = 1",
          "F.relu(x, inplace=True)", "x.detach().zero_()", "x.clone().zero_()"]
QUIZ_5 = ["y.data.mul_(2)", "y.detach().mul_(2)", "y.mul_(2)", "y = y * 2"]
QUIZ_9 = {"A": "out = bn(conv(x)); out += identity; out = F.relu(out, inplace=True)",
          "B": "out = conv(F.relu(x, inplace=True)); out += identity", "C": "x = x * 0.5; out = conv(x) + identity",
          "D": "x *= 0.5; out = conv(x) + identity", "E": "x[:, 0] = 0.0; out = conv(x) + identity"}
_ONE_WAY = "mul_ writes into feature; check whether identity sees that write in both versions"
_Y_AT_THAT_MOMENT = "y[0] = 5 writes into the tensor that y names at that moment; check which tensor that is"

register(
    Exercise("01.2", hint="follow each of b, c, d, e back to a: which ones does autograd see as functions of a, "
                          "and which are constants?",
             form="three numbers, one per element of a", parse=numbers(3),
             truth=_snippet("a = torch.tensor([2.0, 3.0, 4.0], requires_grad=True); "
                            "b, c, d, e = a.clone(), a, a.detach(), a.detach().clone(); "
                            "(b * c + d * e).sum().backward()", "tuple(a.grad.tolist())"),
             wrong=lambda t: {
                 tuple(2 * v for v in t): "detach() cuts a tensor out of the graph: d and e are constants to autograd",
                 tuple(v / 2 for v in t): "clone() is differentiable and c is a itself: both factors of b * c depend "
                                          "on a",
                 (0.0,) * 3: "loss depends on a through b and c; a backward pass does reach a"}),
    Exercise("02.1", hint="work line by line: which lines change the shared list, and which make a new one?",
             form="your prediction as a list, such as [7, 8]", parse=numbers(integral=True),
             truth=_snippet("xs = [1, 2]; ys = xs; ys += [3]; ys = ys + [4]", "tuple(xs)"),
             wrong=lambda t: {(1, 2): "a list has __iadd__, so ys += [3] changes the list that both names share",
                              t + (4,): "ys + [4] builds a new list and only the name ys moves to it"}),
    Exercise("03.1", hint="a stride counts the storage elements you skip to move one step along a dimension; "
                          "permute reorders the dimensions, and each stride moves with its dimension",
             form="the strides as a tuple of three ints, like the one `t.stride()` returns",
             parse=numbers(3, integral=True), truth=lambda: torch.zeros(2, 3, 4).permute(2, 0, 1).stride(),
             wrong=lambda t: {
                 torch.zeros(2, 3, 4).stride(): "those are the strides before permute; after permute, each stride "
                                                "follows its dimension",
                 torch.zeros(4, 2, 3).stride(): "those are the strides of a new contiguous tensor of shape (4, 2, 3); "
                                                "permute copies nothing, so it reuses x's strides in the new order"}),
    Exercise("04.1", hint="count the writes into a's storage; one line rebinds a name to a new tensor",
             form="the version as an int", parse=whole,
             truth=_snippet("a = torch.zeros(3); b = a; c = a[1:]; a += 1; c.mul_(2); b = b + 1; b.add_(1)",
                            "a._version"),
             wrong=lambda t: {v: "too many: after `b = b + 1`, the name b refers to a new tensor with its own "
                                 "counter, so writes into it do not count for a" if v > t else
                                 "too few: a view shares its base's version counter, so a write through c counts "
                                 "for a too" for v in range(t + 6)}),
    Exercise("04.2", hint="for each line ask: does it write into existing memory (which tensor's?), or make a new "
                          "tensor and at most move a name?",
             form='letters from A to H, as a string such as "AE" or a set such as {"A", "E"}',
             parse=choices(LINES_04_2),
             truth=lambda: _written(LINES_04_2, lambda: torch.tensor([[1.0, -2.0], [3.0, -4.0]])),
             wrong=lambda t: {
                 "A": "`x = x * 2` makes a new tensor and moves the name x to it; the old tensor is not written",
                 "H": "a clone has its own memory, so writing into it leaves x alone",
                 "E": "`x.clamp(min=0)` has no trailing underscore: it returns a new tensor and only reads x",
                 **dict.fromkeys("DG", "a write through another tensor object that shares x's memory (a view, or "
                                       "a detached tensor) is a write into x too"),
                 **dict.fromkeys("BCF", "augmented assignment, index assignment and out= all write into an "
                                        "existing tensor")}),
    Exercise("05.1", hint="an op breaks when its backward formula needs its own output; saved_by_node(op(x)) shows "
                          "'result' for those",
             form='a set of op names, e.g. {"add", "clone"}', parse=choices(OPS_05_1),
             truth=lambda: frozenset(n for n, op in OPS_05_1.items() if _after_write(op, "y.mul_(2)") == "error")),
    Exercise("06.2", hint="draw the graph with show_saved=True and follow the plain line from the second "
                          "MulBackward0 to its 'other' box; or compare that node's _saved_other with `is`",
             form='the name of a field as a string, e.g. "weight1"', parse=one_of(TOY_FIELDS),
             truth=_snippet("r = toy_residual('clone', backward=False)", "next(name for name in TOY_FIELDS "
                            "if getattr(r, name) is r.feature2.grad_fn._saved_other)",
                            toy_residual=toy_residual, TOY_FIELDS=TOY_FIELDS)),
    Exercise("06.3", hint="a node is recorded only for an op on a tensor that requires grad; compare graph_nodes "
                          "of the two blocks' outputs",
             form="a whole number (an int), such as the result of graph_nodes(...)[...]", parse=whole,
             truth=lambda: (graph_nodes(BasicBlock(4, 4, identity="clone")(torch.randn(1, 4, 5, 5)).sum())
                            - graph_nodes(BasicBlock(4, 4)(torch.randn(1, 4, 5, 5)).sum()))["CloneBackward0"]),
    Exercise("07.1", hint="measure() a clone of that tensor and read m.allocated",
             form="a whole number of bytes, an int", parse=whole,
             truth=lambda: torch.zeros(10, 10, dtype=torch.float16).clone().untyped_storage().nbytes(),
             wrong=lambda t: {
                 torch.zeros(10, 10).numel(): "that is the number of elements; how many bytes does each float16 "
                                              "element take?",
                 torch.zeros(10, 10).nbytes: "that would be float32; the tensor is float16"}),
    Exercise("07.3", hint="measure() both variants and subtract; then compare saved_for_backward(...).nbytes",
             form='a dict with exactly the keys "allocated" and "saved", each a whole number of bytes',
             parse=numbers(integral=True, names=("allocated", "saved")),
             truth=_extra_07_3,
             wrong=lambda t: {("allocated", _nbytes(8, 16, 32, 32)): "that is one copy of the x of the section above; "
                                                                    "the question's x is torch.randn(4, 16, 64, 64)",
                              "allocated": "compare what the two forward passes allocate",
                              "saved": "the allocation is right; now count what each variant keeps for backward"}),
    Exercise("08.1", hint="output = input + weight2 * weight1 * input; differentiate the loss (output - 8.5) ** 2 "
                          "with respect to weight1 by the chain rule",
             form="a tuple (output, weight1_grad) of two numbers",
             parse=numbers(names=("output", "weight1_grad")), truth=_POST_08_1["input_data"],
             wrong=lambda t: {
                 ("output", _POST_08_1["feature"]()["output"]): "that is the output of the post's model, where the "
                                                                "skip carries feature; here it carries the input",
                 ("output", t["weight1_grad"]): "your first number is weight1's gradient: the order is (output, "
                                                "weight1_grad)",
                 "output": "the output is not right yet: the skip now adds the input, not feature",
                 ("weight1_grad", _POST_08_1["feature"]()["weight1_grad"]):
                     "that is the post's gradient; with the input on the skip, weight1 only reaches the output "
                     "through the branch",
                 "weight1_grad": "the output is right; recompute weight1's gradient: d loss / d output changes too"}),
    Exercise("08.3", hint='ask of each op: does its backward need its own output? Is x a leaf? Use "silent", '
                          '"backward error" or "immediate error"',
             form=f"a dict with the keys {list(MADE_08_3)}", parse=outcomes(MADE_08_3, SAID_08_3.values()),
             truth=lambda: {key: SAID_08_3[_error(f"x = {made}; identity = x; x.relu_(); "
                                                  "(identity + x).sum().backward()", bn=torch.nn.BatchNorm2d(3),
                                                  a=torch.randn(2, 3, 4, 4, requires_grad=True),
                                                  b=torch.randn(2, 3, 4, 4, requires_grad=True))]
                            for key, made in MADE_08_3.items()}),
    Exercise("09.1", hint="the clone copies each block's input once; add up the bytes of the inputs of all 8 blocks "
                          "(forward pre-hooks on the blocks see them)",
             form="a whole number of bytes (an int)", parse=whole,
             truth=lambda: sum(n for n, _ in _block_inputs(*SHAPE_09_1)), wrong=_wrong_09_1),
    Exercise("09.3", hint="the clone lives until the block returns, unless something saved it for backward; look "
                          "at what a convolution saves",
             form="a tuple (plain_block, downsampling_block) of two ints",
             parse=numbers(integral=True, names=("plain", "downsampling")), truth=_held_09_3,
             wrong=lambda t: {
                 ("plain", _nbytes(*SHAPE_09_3)): "the plain block's clone is freed when the block returns: nothing "
                                                  "in its graph refers to it",
                 "plain": "the plain block's entry is not right yet",
                 ("downsampling", 0): "in the downsampling block the clone goes into the shortcut's 1x1 convolution: "
                                      "look at what that convolution keeps",
                 ("downsampling", _nbytes(*SHAPE_09_3) // 4): "count bytes, not elements",
                 "downsampling": "the downsampling block's entry is not right yet: start from the size of one copy "
                                 "of the input"}),
    Exercise("10.1", hint="ask of each change: does anything now write into a block's input x before the addition, "
                          "or do the two runs now do different things",
             form='a set of letters, e.g. {"D", "F"}', parse=choices("ABCDEF"),
             truth=lambda: frozenset("ABCE"),   # D: ReluFirstBlock writes into x; F: one run's learning rate
             wrong=lambda t: {"D": "one of your letters makes the block write into its input: the alias then sees "
                                   "the change",
                              "F": "one of your letters changes the training of one run only"}),
    Exercise("quiz.1", hint="a tensor is a leaf when autograd recorded no op that made it; read notebook 01's "
                            "section on leaves again",
             form='a set of labels from the list, e.g. {"b"}', parse=choices("bcd"),
             truth=_snippet("a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True); "
                            "made = {'b': a.clone(), 'c': a, 'd': a.detach()}",
                            "frozenset(name for name, t in made.items() if t.is_leaf)")),
    Exercise("quiz.2", hint="follow which tensor the name y points to after each line; only some lines write into "
                            "the tensor that x names",
             form="the three values of x, e.g. [0.0, 0.0, 0.0]", parse=numbers(3),
             truth=_snippet("x = torch.zeros(3); y = x; y += 1; y = y * 2; y[0] = 5", "tuple(x.tolist())"),
             wrong=lambda t: {
                 (5.0, *t[1:]): _Y_AT_THAT_MOMENT, (5.0, *(2 * v for v in t[1:])): _Y_AT_THAT_MOMENT,
                 tuple(2 * v for v in t): "y = y * 2 makes a new tensor and moves the name y; x is not touched by it",
                 (0.0,) * 3: "y += 1 is not y = y + 1 for a tensor"}),
    Exercise("quiz.3", hint="a view only changes shape, stride and offset; a copy is needed when no single stride "
                            "per dimension can describe the result, or when the indices are data",
             form='a set of labels from the list, e.g. {"x + 0"}', parse=choices(QUIZ_3),
             truth=lambda: frozenset(label for label in QUIZ_3 if _snippet(
                 "x = torch.arange(12.0).view(3, 4)", f"shares_storage({label}, x)", shares_storage=shares_storage)())),
    Exercise("quiz.4", hint="a write into x changes the memory x names; a new tensor, or a rebound name, does not. "
                            "Ask of each line which memory it writes to",
             form='a set of labels from the list, e.g. {"x.add(1)"}', parse=choices(QUIZ_4),
             truth=lambda: _written(QUIZ_4, lambda: torch.tensor([-2.0, -1.0, 0.0, 1.0]))),
    Exercise("quiz.5", hint="for each line, decide whether it writes into the tensor sigmoid saved, and whether "
                            "autograd's version counter sees that write",
             form=f"a dict with the keys {QUIZ_5}",
             parse=outcomes(QUIZ_5, ("error", "wrong gradient", "right gradient")),
             truth=lambda: {line: _after_write(lambda x, w: x.sigmoid(), line) for line in QUIZ_5}),
    Exercise("quiz.6", hint="count the node classes of both graphs with graph_nodes (a Counter) and subtract",
             form='a dict {node class name: how many more}, e.g. {"MulBackward0": 1}', parse=node_counts,
             truth=lambda: tuple(sorted((graph_nodes(toy_residual("clone").loss)
                                         - graph_nodes(toy_residual("alias").loss)).items()))),
    Exercise("quiz.7", hint="a clone allocates room for the elements it copies; what clone's backward formula needs "
                            "is in derivatives.yaml",
             form="a tuple of two whole numbers of bytes, e.g. (100, 20)",
             parse=numbers(integral=True, names=("allocated", "saved")),
             truth=_snippet("r = saved_for_backward(lambda t: t[:, :10].clone(), "
                            "torch.zeros(1000, 1000, requires_grad=True))",
                            "{'allocated': r.result.nbytes, 'saved': r.nbytes}", saved_for_backward=saved_for_backward),
             wrong=lambda t: {
                 ("allocated", _nbytes(1000, 1000)): "that is the size of x's whole storage; the clone copies only "
                                                     "what the view shows",
                 "allocated": "the first number is not right yet: elements times bytes per element",
                 "saved": "the allocation is right; for the second number, look up what clone's backward formula "
                          "needs"}),
    Exercise("quiz.8", hint="write down what identity holds at the moment of the addition, in each version",
             form="a tuple (output with the alias, output with the clone) of two numbers", parse=numbers(2),
             truth=lambda: tuple(_snippet(_POST + _POST_QUIZ_8.format(take), "out.item()")()
                                 for take in ("feature", "feature.clone()")),
             wrong=lambda t: {t[::-1]: "the order is (alias, clone)", (t[0], t[0]): _ONE_WAY, (t[1], t[1]): _ONE_WAY}),
    Exercise("quiz.9", hint="identity = x breaks only when something writes into x (or into a view of it) before "
                            "the addition; rebinding the name x writes nothing",
             form='a set of letters, e.g. {"A"}', parse=choices(QUIZ_9), truth=_differ_quiz_9),
    Exercise("quiz.10", hint="look at what each node of the block saved for backward (saved_by_node)",
             form='one letter, "a", "b", "c" or "d"', parse=one_of("abcd"), truth=lambda: "b",
             wrong=lambda t: {
                 "a": "identity = x makes no copy at all (notebook 01)",
                 "c": "on a tensor, += calls __iadd__, which runs add_ and writes in place (notebook 04)",
                 "d": "autograd checks the versions of saved tensors wherever the op runs, inside a module or not "
                      "(notebook 05)"}),
    Exercise("quiz.11", hint="a block's clone outlives the block only if some backward node saved it; look for the "
                             "blocks that feed the clone into a convolution",
             form="a whole number of bytes (an int)", parse=whole,
             truth=lambda: sum(n for n, down in _block_inputs(*QUIZ_11_SHAPE) if down),
             wrong=lambda t: {
                 **{n: "that is one block's clone; count every block whose clone is still held"
                    for n, down in _block_inputs(*QUIZ_11_SHAPE) if down},
                 0: "some clones are still alive after the forward pass: count the ones that a backward node saved",
                 t // 4: "count bytes, not elements (float32: 4 bytes each)"}),
)
