"""The exercises against the notebooks and against PyTorch: every check is used in a notebook, the labels and the
code a truth runs are those the notebook shows, and the answers that are written down or measured are what PyTorch
does."""

from __future__ import annotations

import importlib
import pkgutil
import re

import nbformat
import torch

import clonelab.exercises
from clonelab import BasicBlock, SecondCodeBlock, check, measure, resnet, saved_by_node
from clonelab.exercises import exercise_ids, nb01_05, quiz
from clonelab.models import Bottleneck, PreActBlock, ReluFirstBlock, conv1x1
from conftest import ROOT
from test_exercise_answers import HELD_11, RIGHT_09_1, X_09_3, by_version

# --- the exercises and the notebooks ------------------------------------------------------------------------


def test_every_exercise_is_used_in_a_notebook_and_every_check_there_exists():
    used = set()
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                used |= set(re.findall(r"""\bcheck\(\s*["']([^"']+)["']""", cell.source))
    assert used == {i for i in exercise_ids() if not i.startswith("demo.")}


def test_the_labels_and_lines_of_the_checks_are_those_the_notebooks_show():
    def markdown(name, marker):
        nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        return next(c.source for c in nb.cells if c.cell_type == "markdown" and marker in c.source)

    task = markdown("04_inplace_and_mutability.ipynb", "Exercise 04.2")
    assert all(f"| {letter} | `{text}` |" in task for letter, text in nb01_05.LINES_04_2.items())
    task = markdown("05_autograd_meets_inplace.ipynb", "Exercise 05.1")
    assert all(f'`"{name}"`' in task for name in nb01_05.OPS_05_1)
    for labels, marker in [(quiz.QUIZ_3, "Question 3 "), (quiz.QUIZ_4, "Question 4 ")]:
        assert all(f'`"{label}"`' in markdown("11_summary_and_quiz.ipynb", marker) for label in labels)


def _exercise_cell(exercise_id: str) -> str:
    """The markdown that sets the exercise: the cells between the one before it and the cell that checks it."""
    prefix = "11" if exercise_id.startswith("quiz.") else exercise_id[:2]
    path = next((ROOT / "notebooks").glob(f"{prefix}_*.ipynb"))
    cells = nbformat.read(path, as_version=4).cells
    at = next(i for i, c in enumerate(cells) if c.cell_type == "code" and f'check("{exercise_id}"' in c.source)
    start = max(i for i in range(at) if cells[i].cell_type == "code") + 1
    return "\n".join(c.source for c in cells[start:at] if c.cell_type == "markdown")


def test_the_code_a_truth_runs_is_the_code_its_notebook_shows():
    """A truth that runs an exercise's code takes it from NOTEBOOK_CODE, which must stand verbatim in the exercise."""
    shown = {}
    for info in pkgutil.iter_modules(clonelab.exercises.__path__):
        shown |= getattr(importlib.import_module(f"clonelab.exercises.{info.name}"), "NOTEBOOK_CODE", {})
    assert {"01.2", "02.1", "04.1", "quiz.2", "quiz.8"} <= set(shown)
    for exercise_id, code in shown.items():
        assert code in _exercise_cell(exercise_id), f"{exercise_id}: its notebook no longer shows the code it runs"


# --- the written-down and measured answers, against what PyTorch does -------------------------------------


def test_02_2_storage_pointers_really_are_zero_without_memory():
    """The premise of the exercise's edge cases, on this torch."""
    assert torch.empty(0).untyped_storage().data_ptr() == 0
    assert torch.empty(3, device="meta").untyped_storage().data_ptr() == 0


def test_07_the_measured_answers_pass(capsys):
    x = torch.zeros(10, 10, dtype=torch.float16)
    with measure() as m:
        x.clone()
    assert check("07.1", m.allocated)


def test_08_1_the_computed_answer_passes(capsys):
    input_data = torch.tensor([1.0])
    w1, w2 = torch.tensor([2.0], requires_grad=True), torch.tensor([3.0], requires_grad=True)
    out = input_data + w2 * (w1 * input_data)
    ((out - 8.5) ** 2).backward()
    assert check("08.1", (out.item(), w1.grad.item()))


def test_09_1_the_expected_number_is_what_the_blocks_see():
    torch.manual_seed(0)
    net = resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000)
    sizes = []
    for m in net.modules():
        if isinstance(m, BasicBlock):
            m.register_forward_pre_hook(lambda module, args: sizes.append(args[0].nbytes))
    with torch.no_grad():
        net(torch.randn(8, 3, 224, 224))
    assert sum(sizes) == RIGHT_09_1


def test_09_2_the_blocks_write_as_the_check_expects():
    from clonelab.exercises.nb06_10 import _blocks_09_2

    for description, block, expected in _blocks_09_2():
        assert by_version(block, torch.randn(2, 8, 6, 6)) == expected, description


def test_09_3_the_expected_numbers_are_measured_on_the_questions_input():
    torch.manual_seed(0)
    x = torch.randn(8, 64, 32, 32)
    makers = {"plain": lambda mode: SecondCodeBlock(64, 64, identity=mode),
              "down": lambda mode: SecondCodeBlock(64, 128, stride=2, identity=mode,
                                                   downsample=torch.nn.Sequential(conv1x1(64, 128, 2),
                                                                                  torch.nn.BatchNorm2d(128)))}
    held = {}
    for name, make in makers.items():
        for mode in ("alias", "clone"):
            block = make(mode)
            block(x)
            with measure() as m:
                out = block(x)  # noqa: F841  (kept: the graph stays alive)
            held[name, mode] = m.net
    assert (held["plain", "clone"] - held["plain", "alias"], held["down", "clone"] - held["down", "alias"]) \
        == (0, X_09_3)


def test_10_1_the_written_answer_is_what_training_does():
    """Each option, run: A, B, C and E keep the alias and clone runs identical; D and F do not."""
    from clonelab.data import Digits, load_digits_tensors
    from clonelab.training import train

    d = load_digits_tensors()
    small = Digits(d.x_train[:192], d.y_train[:192], d.x_test[:64], d.y_test[:64])

    def same(*, block=BasicBlock, inplace=True, seed=(0, 0), lr=(1e-3, 1e-3)):
        losses = []
        for mode, s, rate in zip(("alias", "clone"), seed, lr):
            torch.manual_seed(0)
            model = resnet(block, [1, 1], in_channels=1, base_width=8, stem="small", identity=mode, inplace=inplace)
            losses.append(train(model, small, epochs=1, seed=s, lr=rate, progress=False).step_loss)
        return losses[0] == losses[1]

    outcome = {"A": same(seed=(1, 1)), "B": same(inplace=False), "C": same(block=Bottleneck),
               "D": same(block=ReluFirstBlock), "E": same(block=PreActBlock), "F": same(lr=(1e-3, 2e-3))}
    assert check("10.1", {k for k, kept in outcome.items() if kept})


def test_quiz_7_matches_the_allocator(capsys):
    x = torch.zeros(1000, 1000, requires_grad=True)
    with measure() as m:
        x[:, :10].clone()
    assert check("quiz.7", (m.allocated, 0))


def test_quiz_10_the_written_answer_is_what_pytorch_does(capsys):
    """b is the reason: the block never writes into x, and BN keeps no output of its own for backward."""
    torch.manual_seed(0)
    blocks = {mode: BasicBlock(4, 4, identity=mode) for mode in ("alias", "clone")}
    blocks["clone"].load_state_dict(blocks["alias"].state_dict())
    block = blocks["alias"]
    bn_out = block.bn2(block.conv2(torch.randn(2, 4, 5, 5, requires_grad=True)))
    kept = {r["saved"] for r in saved_by_node(bn_out) if r["node"] == "NativeBatchNormBackward0"}
    assert "result0" not in kept and "result" not in kept and "input" in kept
    x = torch.randn(2, 4, 5, 5, requires_grad=True) * 1.0     # a non-leaf, as between blocks
    outs, grads = [], []
    for block in blocks.values():
        z = x.detach().requires_grad_()
        out = block(z * 1.0)
        out.sum().backward()                                   # the in-place += and ReLU raise nothing
        outs.append(out.detach())
        grads.append(z.grad)
    assert torch.equal(*outs) and torch.equal(*grads)
    before = x._version
    blocks["alias"](x)
    assert x._version == before                                # the block only reads x
    assert check("quiz.10", "b")


def test_quiz_11_matches_the_allocator(capsys):
    """The clone copy of a ResNet-18 holds exactly this much more than the alias copy after a forward pass."""
    from clonelab import model_clone_cost

    torch.manual_seed(0)
    cost = model_clone_cost(resnet(SecondCodeBlock, [2, 2, 2, 2], num_classes=1000), torch.randn(quiz.QUIZ_11_SHAPE),
                            repeat=0)
    assert cost["extra_net"] == HELD_11
    assert check("quiz.11", cost["extra_net"])
