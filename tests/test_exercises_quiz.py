"""The quiz of notebook 11: every right answer passes, wrong ones get a hint, none leak the answer.

quiz.10 has a written-down answer; a test checks it against what PyTorch does.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from clonelab import BasicBlock, check, resnet, saved_by_node
from clonelab.exercises import exercise_ids


def test_quiz_has_eleven_questions():
    assert [i for i in exercise_ids() if i.startswith("quiz.")] == sorted(f"quiz.{n}" for n in range(1, 12))


def _wrong(exercise_id, answer, capsys, *leaks):
    assert not check(exercise_id, answer)
    out = capsys.readouterr().out
    assert "Hint" in out
    for leak in leaks:
        assert leak not in out, f"the hint gives away {leak!r}"


# --- quiz.1 ------------------------------------------------------------------

@pytest.mark.parametrize("answer", [{"c", "d"}, ["d", "c"], (" c", "d "), frozenset("cd"), ["c", "d", "c"]])
def test_quiz_1_right(answer, capsys):
    assert check("quiz.1", answer)


@pytest.mark.parametrize("answer", [{"b", "c", "d"}, {"c"}, {"d"}, {"b"}, set(), "cd", {"a", "c", "d"}, {1}, 3])
def test_quiz_1_wrong(answer, capsys):
    _wrong("quiz.1", answer, capsys, "{'c', 'd'}", "{'d', 'c'}")


# --- quiz.2 ------------------------------------------------------------------

@pytest.mark.parametrize("answer", [[1.0, 1.0, 1.0], [1, 1, 1], (1, 1, 1), torch.ones(3), np.ones(3),
                                    torch.ones(3, dtype=torch.int64)])
def test_quiz_2_right(answer, capsys):
    assert check("quiz.2", answer)


@pytest.mark.parametrize("answer", [[0, 0, 0], [2, 2, 2], [5, 2, 2], [5, 1, 1], [1, 1], [1, 1, 1, 1], "111",
                                    [True, True, True], torch.ones(2, 2)])
def test_quiz_2_wrong(answer, capsys):
    _wrong("quiz.2", answer, capsys, "[1.0, 1.0, 1.0]", "[1, 1, 1]")


# --- quiz.3 ------------------------------------------------------------------

RIGHT_3 = {"x[1]", "x[:, ::2]", "x.reshape(4, 3)", "x.detach()", "x.expand(2, 3, 4)"}


@pytest.mark.parametrize("answer", [RIGHT_3, sorted(RIGHT_3), {"x[1]", "x[:,::2]", "x.reshape(4,3)", "x.detach()",
                                                               "x.expand(2,3,4)"}])
def test_quiz_3_right(answer, capsys):
    assert check("quiz.3", answer)


@pytest.mark.parametrize("answer", [RIGHT_3 - {"x.detach()"}, RIGHT_3 | {"x[[0, 2]]"}, RIGHT_3 | {"x + 0"},
                                    RIGHT_3 | {"x.t().reshape(12)"}, RIGHT_3 | {"x[x > 5]"}, {"x.view(2, 6)"},
                                    "x[1]", {"x[1]": True}])
def test_quiz_3_wrong(answer, capsys):
    _wrong("quiz.3", answer, capsys, "x.expand(2, 3, 4)'", "x[:, ::2]'")


# --- quiz.4 ------------------------------------------------------------------

RIGHT_4 = {"x += 1", "x.add_(1)", "torch.add(x, 1, out=x)", "x[0] = 1", "F.relu(x, inplace=True)",
           "x.detach().zero_()"}


@pytest.mark.parametrize("answer", [RIGHT_4, list(RIGHT_4), {a.replace(" ", "") for a in RIGHT_4}])
def test_quiz_4_right(answer, capsys):
    assert check("quiz.4", answer)


@pytest.mark.parametrize("answer", [RIGHT_4 | {"x = x + 1"}, RIGHT_4 | {"x.clone().zero_()"}, RIGHT_4 | {"x.add(1)"},
                                    RIGHT_4 - {"x.detach().zero_()"}, RIGHT_4 - {"torch.add(x, 1, out=x)"},
                                    set(), {"x.mul_(2)"}])
def test_quiz_4_wrong(answer, capsys):
    _wrong("quiz.4", answer, capsys, "'x.detach().zero_()'")


# --- quiz.5 ------------------------------------------------------------------

RIGHT_5 = {"y.data.mul_(2)": "wrong gradient", "y.detach().mul_(2)": "error", "y.mul_(2)": "error",
           "y = y * 2": "right gradient"}


def test_quiz_5_right(capsys):
    assert check("quiz.5", RIGHT_5)
    assert check("quiz.5", {k.replace(" ", ""): v.upper() + " " for k, v in RIGHT_5.items()})


@pytest.mark.parametrize("change", [{"y.data.mul_(2)": "error"}, {"y.data.mul_(2)": "right gradient"},
                                    {"y.detach().mul_(2)": "wrong gradient"}, {"y.mul_(2)": "right gradient"},
                                    {"y = y * 2": "error"}, {"y = y * 2": "right"}, {"y = y * 2": None}])
def test_quiz_5_wrong(change, capsys):
    _wrong("quiz.5", {**RIGHT_5, **change}, capsys)


def test_quiz_5_wrong_shape(capsys):
    _wrong("quiz.5", {k: v for k, v in RIGHT_5.items() if k != "y.mul_(2)"}, capsys)
    _wrong("quiz.5", list(RIGHT_5.values()), capsys)
    _wrong("quiz.5", {**RIGHT_5, "y.relu_()": "error"}, capsys)


# --- quiz.6 ------------------------------------------------------------------

@pytest.mark.parametrize("answer", [{"CloneBackward0": 1}, {"CloneBackward0": 1, "MulBackward0": 0},
                                    Counter({"CloneBackward0": 1}),
                                    {"CloneBackward0": np.int64(1)}])
def test_quiz_6_right(answer, capsys):
    assert check("quiz.6", answer)


@pytest.mark.parametrize("answer", [{"CloneBackward0": 2}, {"CloneBackward0": 1, "AccumulateGrad": 1},
                                    {"Clone": 1}, {"CloneBackward0": True}, {"CloneBackward0": 1.0}, "CloneBackward0",
                                    {}, 1])
def test_quiz_6_wrong(answer, capsys):
    _wrong("quiz.6", answer, capsys, "CloneBackward0': 1")


# --- quiz.7 ------------------------------------------------------------------

@pytest.mark.parametrize("answer", [(40_000, 0), [40000, 0], (np.int64(40000), 0), (40000.0, 0.0),
                                    (torch.tensor(40000), torch.tensor(0))])
def test_quiz_7_right(answer, capsys):
    assert check("quiz.7", answer)


@pytest.mark.parametrize("answer", [(4_000_000, 0), (40_000, 40_000), (10_000, 0), (40_000, 4), (0, 40_000),
                                    (40_000.5, 0), 40_000, (40_000,), ("40000", "0")])
def test_quiz_7_wrong(answer, capsys):
    _wrong("quiz.7", answer, capsys, "40000", "40,000", "40_000")


def test_quiz_7_matches_the_allocator(capsys):
    from clonelab import measure

    x = torch.zeros(1000, 1000, requires_grad=True)
    with measure() as m:
        x[:, :10].clone()
    assert check("quiz.7", (m.allocated, 0))


# --- quiz.8 ------------------------------------------------------------------

@pytest.mark.parametrize("answer", [(16.0, 14.0), [16, 14], (torch.tensor([16.0]), np.float32(14.0))])
def test_quiz_8_right(answer, capsys):
    assert check("quiz.8", answer)


@pytest.mark.parametrize("answer", [(14.0, 16.0), (14.0, 14.0), (16.0, 16.0), (8.0, 8.0), (12.0, 14.0), 16.0,
                                    (16.0,), ("16", "14")])
def test_quiz_8_wrong(answer, capsys):
    _wrong("quiz.8", answer, capsys, "16", "14")


# --- quiz.9 ------------------------------------------------------------------

@pytest.mark.parametrize("answer", [{"B", "D", "E"}, ["b", "d", "e"], ("(B)", " d", "E"), ["B", "D", "E", "E"]])
def test_quiz_9_right(answer, capsys):
    assert check("quiz.9", answer)


@pytest.mark.parametrize("answer", [{"B", "D"}, {"B", "D", "E", "C"}, {"A", "B", "D", "E"}, {"B"}, set(), "BDE",
                                    {"F"}, {2}])
def test_quiz_9_wrong(answer, capsys):
    _wrong("quiz.9", answer, capsys, "'B'", "'E'")


def test_quiz_9_leaves_the_global_rng_alone(capsys):
    torch.manual_seed(123)
    expected = torch.randn(3)
    torch.manual_seed(123)
    check("quiz.9", {"A"})
    assert torch.equal(torch.randn(3), expected)


# --- quiz.10 -----------------------------------------------------------------

@pytest.mark.parametrize("answer", ["b", "B", " b ", "(b)"])
def test_quiz_10_right(answer, capsys):
    assert check("quiz.10", answer)


@pytest.mark.parametrize("answer", ["a", "c", "d", "e", "bc", 2, ["b"]])
def test_quiz_10_wrong(answer, capsys):
    _wrong("quiz.10", answer, capsys)


def test_quiz_10_matches_what_pytorch_does():
    """b is the reason: the block never writes into x, and BN keeps no output of its own for backward."""
    torch.manual_seed(0)
    block = BasicBlock(4, 4)
    bn_out = block.bn2(block.conv2(torch.randn(2, 4, 5, 5, requires_grad=True)))
    kept = {r["saved"] for r in saved_by_node(bn_out) if r["node"] == "NativeBatchNormBackward0"}
    assert "result0" not in kept and "result" not in kept and "input" in kept
    x = torch.randn(2, 4, 5, 5, requires_grad=True) * 1.0     # a non-leaf, as between blocks
    outs, grads = [], []
    for mode in ("alias", "clone"):
        block.identity = mode
        z = x.detach().requires_grad_()
        out = block(z * 1.0)
        out.sum().backward()                                   # the in-place += and ReLU raise nothing
        outs.append(out.detach())
        grads.append(z.grad)
    assert torch.equal(*outs) and torch.equal(*grads)
    before = x._version
    block(x)
    assert x._version == before                                # the block only reads x


# --- quiz.11 ---------------------------------------------------------------

HELD_11 = 4 * (64 * 8 * 8 + 128 * 4 * 4 + 256 * 2 * 2) * 4   # the inputs of layer2.0, layer3.0, layer4.0


@pytest.mark.parametrize("answer", [HELD_11, np.int64(HELD_11), float(HELD_11), torch.tensor(HELD_11)])
def test_quiz_11_right(answer, capsys):
    assert check("quiz.11", answer)


@pytest.mark.parametrize("answer", [0, HELD_11 // 4, 65_536, HELD_11 + 4 * 256 * 2 * 2 * 4, HELD_11 + 0.5,
                                    str(HELD_11), [HELD_11], None])
def test_quiz_11_wrong(answer, capsys):
    _wrong("quiz.11", answer, capsys, str(HELD_11), f"{HELD_11:,}")


def test_quiz_11_matches_the_allocator(capsys):
    """The clone copy of a ResNet-18 holds exactly this much more than the alias copy after a forward pass."""
    from clonelab import model_clone_cost
    from clonelab.exercises.quiz import QUIZ_11_SHAPE

    torch.manual_seed(0)
    cost = model_clone_cost(resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000), torch.randn(QUIZ_11_SHAPE), repeat=0)
    assert cost["extra_net"] == HELD_11
    assert check("quiz.11", cost["extra_net"])
