"""The quiz of notebook 11."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from clonelab.exercises._core import Exercise, choices, numbers, register, snippet
from clonelab.exercises.nb01_05 import written

# The code the quiz shows, which the truths run as it stands (a test compares them)
NOTEBOOK_CODE = {
    "quiz.1": "x = torch.zeros(3)\ny = x\ny += 1\ny = y * 2\ny[0] = 5",
    "quiz.3": ("input_data = torch.tensor([1.])\nweight1 = torch.tensor([2.], requires_grad=True)\n"
               "weight2 = torch.tensor([3.], requires_grad=True)\nfeature = weight1 * input_data\n"
               "identity = feature            # or: feature.clone()\nfeature.mul_(2)               # the added line\n"
               "feature2 = weight2 * feature\noutput_data = identity + feature2"),
}
QUIZ_2 = ["x += 1", "x = x + 1", "x.add_(1)", "x.add(1)", "torch.add(x, 1, out=x)", "x[0] = 1",
          "F.relu(x, inplace=True)", "x.detach().zero_()", "x.clone().zero_()"]
QUIZ_4 = {"A": "out = bn(conv(x)); out += identity; out = F.relu(out, inplace=True)",
          "B": "out = conv(F.relu(x, inplace=True)); out += identity", "C": "x = x * 0.5; out = conv(x) + identity",
          "D": "x *= 0.5; out = conv(x) + identity", "E": "x[:, 0] = 0.0; out = conv(x) + identity"}
_ONE_WAY = "mul_ writes into feature; check whether identity sees that write in both versions"
_Y_AT_THAT_MOMENT = "y[0] = 5 writes into the tensor that y names at that moment; check which tensor that is"


def _differ_quiz_4() -> frozenset[str]:
    """The blocks whose output differs between ``identity = x`` and ``identity = x.clone()``."""
    kernel = torch.randn(3, 3, 3, 3, generator=torch.Generator().manual_seed(9)) * 0.3
    tools = {"conv": lambda t: F.conv2d(t, kernel, padding=1),
             "bn": lambda t: F.batch_norm(t, None, None, training=True)}
    outs = {(label, take): snippet(f"identity = {take}; " + code, "out", **tools,
                                   x=torch.randn(2, 3, 5, 5, generator=torch.Generator().manual_seed(19)))()
            for label, code in QUIZ_4.items() for take in ("x", "x.clone()")}
    return frozenset(label for label in QUIZ_4 if not torch.equal(outs[label, "x"], outs[label, "x.clone()"]))


register(
    Exercise("quiz.1", hint="follow which tensor the name y points to after each line; only some lines write into "
                            "the tensor that x names",
             form="the three values of x, e.g. [0.0, 0.0, 0.0]", parse=numbers(3),
             truth=snippet(NOTEBOOK_CODE["quiz.1"], "tuple(x.tolist())"),
             wrong_answers=lambda t: {
                 (5.0, *t[1:]): _Y_AT_THAT_MOMENT, (5.0, *(2 * v for v in t[1:])): _Y_AT_THAT_MOMENT,
                 tuple(2 * v for v in t): "ask of y = y * 2: does it write into the tensor y names, or make a new one and move the name y?",
                 (0.0,) * 3: "y += 1 is not y = y + 1 for a tensor"}),
    Exercise("quiz.2", hint="a write into x changes the memory x names; a new tensor, or a rebound name, does not. "
                            "Ask of each line which memory it writes to",
             form='a set of labels from the list, e.g. {"x.add(1)"}', parse=choices(QUIZ_2),
             truth=lambda: written(QUIZ_2, lambda: torch.tensor([-2.0, -1.0, 0.0, 1.0]))),
    Exercise("quiz.3", hint="write down what identity holds at the moment of the addition, in each version",
             form="a tuple (output with the alias, output with the clone) of two numbers", parse=numbers(2),
             truth=lambda: tuple(snippet(code, "output_data.item()")() for code in (
                 NOTEBOOK_CODE["quiz.3"], NOTEBOOK_CODE["quiz.3"].replace("identity = feature ",
                                                                          "identity = feature.clone() "))),
             wrong_answers=lambda t: {t[::-1]: "the order is (alias, clone)", (t[0], t[0]): _ONE_WAY,
                                      (t[1], t[1]): _ONE_WAY}),
    Exercise("quiz.4", hint="identity = x breaks only when something writes into x (or into a view of it) before or at "
                            "the addition; ask of each line: does it write into the tensor x names, or make a new "
                            "tensor and move the name x to it?",
             form='a set of letters, e.g. {"A"}', parse=choices(QUIZ_4), truth=_differ_quiz_4),
)
