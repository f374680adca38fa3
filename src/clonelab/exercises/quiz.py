"""The quiz of notebook 11; ``quiz.10``'s answer, a choice between explanations, is written down (a test runs it)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from clonelab.exercises._core import (Exercise, choices, nbytes_of, node_counts, numbers, one_of, outcomes, register,
                                      snippet, whole)
from clonelab.exercises.nb01_05 import after_write, written
from clonelab.exercises.nb06_10 import resnet18_inputs
from clonelab.graphs import graph_nodes
from clonelab.inspection import shares_storage
from clonelab.memory import saved_for_backward
from clonelab.models import toy_residual

# The code the quiz shows, which the truths run as it stands (a test compares them)
NOTEBOOK_CODE = {
    "quiz.2": "x = torch.zeros(3)\ny = x\ny += 1\ny = y * 2\ny[0] = 5",
    "quiz.8": ("input_data = torch.tensor([1.])\nweight1 = torch.tensor([2.], requires_grad=True)\n"
               "weight2 = torch.tensor([3.], requires_grad=True)\nfeature = weight1 * input_data\n"
               "identity = feature            # or: feature.clone()\nfeature.mul_(2)               # the added line\n"
               "feature2 = weight2 * feature\noutput_data = identity + feature2"),
}
QUIZ_3 = ["x[1]", "x[:, ::2]", "x[[0, 2]]", "x.reshape(4, 3)", "x.t().reshape(12)", "x.detach()", "x + 0",
          "x.expand(2, 3, 4)", "x[x > 5]"]
QUIZ_4 = ["x += 1", "x = x + 1", "x.add_(1)", "x.add(1)", "torch.add(x, 1, out=x)", "x[0] = 1",
          "F.relu(x, inplace=True)", "x.detach().zero_()", "x.clone().zero_()"]
QUIZ_5, QUIZ_11_SHAPE = ["y.data.mul_(2)", "y.detach().mul_(2)", "y.mul_(2)", "y = y * 2"], (4, 3, 32, 32)
QUIZ_9 = {"A": "out = bn(conv(x)); out += identity; out = F.relu(out, inplace=True)",
          "B": "out = conv(F.relu(x, inplace=True)); out += identity", "C": "x = x * 0.5; out = conv(x) + identity",
          "D": "x *= 0.5; out = conv(x) + identity", "E": "x[:, 0] = 0.0; out = conv(x) + identity"}
_ONE_WAY = "mul_ writes into feature; check whether identity sees that write in both versions"
_Y_AT_THAT_MOMENT = "y[0] = 5 writes into the tensor that y names at that moment; check which tensor that is"


def _differ_quiz_9() -> frozenset[str]:
    """The blocks whose output differs between ``identity = x`` and ``identity = x.clone()``."""
    kernel = torch.randn(3, 3, 3, 3, generator=torch.Generator().manual_seed(9)) * 0.3
    tools = {"conv": lambda t: F.conv2d(t, kernel, padding=1),
             "bn": lambda t: F.batch_norm(t, None, None, training=True)}
    outs = {(label, take): snippet(f"identity = {take}; " + code, "out", **tools,
                                   x=torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(19)))()
            for label, code in QUIZ_9.items() for take in ("x", "x.clone()")}
    return frozenset(label for label in QUIZ_9 if not torch.equal(outs[label, "x"], outs[label, "x.clone()"]))


register(
    Exercise("quiz.1", hint="a tensor is a leaf when autograd recorded no op that made it; read notebook 01's "
                            "section on leaves again",
             form='a set of labels from the list, e.g. {"b"}', parse=choices("bcd"),
             truth=snippet("a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True); "
                           "made = {'b': a.clone(), 'c': a, 'd': a.detach()}",
                           "frozenset(name for name, t in made.items() if t.is_leaf)")),
    Exercise("quiz.2", hint="follow which tensor the name y points to after each line; only some lines write into "
                            "the tensor that x names",
             form="the three values of x, e.g. [0.0, 0.0, 0.0]", parse=numbers(3),
             truth=snippet(NOTEBOOK_CODE["quiz.2"], "tuple(x.tolist())"),
             wrong_answers=lambda t: {
                 (5.0, *t[1:]): _Y_AT_THAT_MOMENT, (5.0, *(2 * v for v in t[1:])): _Y_AT_THAT_MOMENT,
                 tuple(2 * v for v in t): "y = y * 2 makes a new tensor and moves the name y; x is not touched by it",
                 (0.0,) * 3: "y += 1 is not y = y + 1 for a tensor"}),
    Exercise("quiz.3", hint="a view only changes shape, stride and offset; a copy is needed when no single stride "
                            "per dimension can describe the result, or when the indices are data",
             form='a set of labels from the list, e.g. {"x + 0"}', parse=choices(QUIZ_3),
             truth=lambda: frozenset(label for label in QUIZ_3 if snippet(
                 "x = torch.arange(12.0).view(3, 4)", f"shares_storage({label}, x)", shares_storage=shares_storage)())),
    Exercise("quiz.4", hint="a write into x changes the memory x names; a new tensor, or a rebound name, does not. "
                            "Ask of each line which memory it writes to",
             form='a set of labels from the list, e.g. {"x.add(1)"}', parse=choices(QUIZ_4),
             truth=lambda: written(QUIZ_4, lambda: torch.tensor([-2.0, -1.0, 0.0, 1.0]))),
    Exercise("quiz.5", hint="for each line, decide whether it writes into the tensor sigmoid saved, and whether "
                            "autograd's version counter sees that write",
             form=f"a dict with the keys {QUIZ_5}",
             parse=outcomes(QUIZ_5, ("error", "wrong gradient", "right gradient")),
             truth=lambda: {line: after_write(lambda x, w: x.sigmoid(), line) for line in QUIZ_5}),
    Exercise("quiz.6", hint="count the node classes of both graphs with graph_nodes (a Counter) and subtract",
             form='a dict {node class name: how many more}, e.g. {"MulBackward0": 1}', parse=node_counts,
             truth=lambda: tuple(sorted((graph_nodes(toy_residual("clone").loss)
                                         - graph_nodes(toy_residual("alias").loss)).items()))),
    Exercise("quiz.7", hint="a clone allocates room for the elements it copies; what clone's backward formula needs "
                            "is in derivatives.yaml",
             form="a tuple of two whole numbers of bytes, e.g. (100, 20)",
             parse=numbers(integral=True, names=("allocated", "saved")),
             truth=snippet("r = saved_for_backward(lambda t: t[:, :10].clone(), "
                           "torch.zeros(1000, 1000, requires_grad=True))",
                           "{'allocated': r.result.nbytes, 'saved': r.nbytes}", saved_for_backward=saved_for_backward),
             wrong_values=lambda t: {("allocated", nbytes_of(1000, 1000)): "that is the size of x's whole storage; "
                                                                           "the clone copies only what the view shows"},
             wrong_parts={"allocated": "the first number is not right yet: elements times bytes per element",
                          "saved": "the allocation is right; for the second number, look up what clone's backward "
                                   "formula needs"}),
    Exercise("quiz.8", hint="write down what identity holds at the moment of the addition, in each version",
             form="a tuple (output with the alias, output with the clone) of two numbers", parse=numbers(2),
             truth=lambda: tuple(snippet(code, "output_data.item()")() for code in (
                 NOTEBOOK_CODE["quiz.8"], NOTEBOOK_CODE["quiz.8"].replace("identity = feature ",
                                                                          "identity = feature.clone() "))),
             wrong_answers=lambda t: {t[::-1]: "the order is (alias, clone)", (t[0], t[0]): _ONE_WAY,
                                      (t[1], t[1]): _ONE_WAY}),
    Exercise("quiz.9", hint="identity = x breaks only when something writes into x (or into a view of it) before "
                            "the addition; rebinding the name x writes nothing",
             form='a set of letters, e.g. {"A"}', parse=choices(QUIZ_9), truth=_differ_quiz_9),
    Exercise("quiz.10", hint="look at what each node of the block saved for backward (saved_by_node)",
             form='one letter, "a", "b", "c" or "d"', parse=one_of("abcd"), truth=lambda: "b",
             wrong_answers=lambda t: {
                 "a": "identity = x makes no copy at all (notebook 01)",
                 "c": "on a tensor, += calls __iadd__, which runs add_ and writes in place (notebook 04)",
                 "d": "autograd checks the versions of saved tensors wherever the op runs, inside a module or not "
                      "(notebook 05)"}),
    Exercise("quiz.11", hint="a block's clone outlives the block only if some backward node saved it; look for the "
                             "blocks that feed the clone into a convolution",
             form="a whole number of bytes (an int)", parse=whole,
             truth=lambda: sum(n for n, down in resnet18_inputs(*QUIZ_11_SHAPE) if down),
             wrong_answers=lambda t: {
                 **{n: "that is one block's clone; count every block whose clone is still held"
                    for n, down in resnet18_inputs(*QUIZ_11_SHAPE) if down},
                 0: "some clones are still alive after the forward pass: count the ones that a backward node saved",
                 t // 4: "count bytes, not elements (float32: 4 bytes each)"}),
)
