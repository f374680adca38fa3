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
from clonelab import BasicBlock, SecondCodeBlock, check, measure, resnet
from clonelab.exercises import exercise_ids, nb01_05, quiz
from clonelab.models import Bottleneck, PreActBlock, ReluFirstBlock, conv1x1
from conftest import ROOT
from test_exercise_answers import X_09_3, by_version

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
    assert all(f'`"{label}"`' in markdown("11_summary_and_quiz.ipynb", "Question 2 ") for label in quiz.QUIZ_2)


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
    assert {"01.2", "04.1", "quiz.1", "quiz.3"} <= set(shown)
    for exercise_id, code in shown.items():
        assert code in _exercise_cell(exercise_id), f"{exercise_id}: its notebook no longer shows the code it runs"


# --- the written-down and measured answers, against what PyTorch does -------------------------------------


def test_02_2_storage_pointers_really_are_zero_without_memory():
    """The premise of the exercise's edge cases, on this torch."""
    assert torch.empty(0).untyped_storage().data_ptr() == 0
    assert torch.empty(3, device="meta").untyped_storage().data_ptr() == 0


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
