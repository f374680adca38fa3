"""Exercises of notebook 10 (training a small ResNet): right answers pass, wrong ones get a hint."""

from __future__ import annotations

import pytest
import torch

from clonelab import check
from clonelab.data import Digits, load_digits_tensors
from clonelab.models import BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock, resnet
from clonelab.training import train

# --- 10.1 -------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [{"A", "B", "C", "E"}, ["e", "c", "b", "a"], ("A", "B", "C", "E"), "ABCE",
                                    "a, b, c, e", frozenset("ACEB")])
def test_10_1_right(answer, capsys):
    assert check("10.1", answer)


@pytest.mark.parametrize("answer,says", [
    ({"A", "B", "C", "D", "E"}, "write into its input"),
    ({"A", "B", "C", "E", "F"}, "one run only"),
    ({"A", "B"}, "missing"),
    (set(), "missing"),
    ({"A", "B", "C", "E", "G"}, "the options are A to F"),
    ({"AB"}, "set of letters"),
    (4, "set of letters"),
])
def test_10_1_wrong(answer, says, capsys):
    assert not check("10.1", answer)
    out = capsys.readouterr().out
    assert says in out


@pytest.fixture(scope="module")
def small_data() -> Digits:
    d = load_digits_tensors()
    return Digits(d.x_train[:192], d.y_train[:192], d.x_test[:64], d.y_test[:64])


def _pair(small_data, *, block=BasicBlock, inplace=True, seed=(0, 0), lr=(1e-3, 1e-3)):
    """Step losses of the alias run and of the clone run, after one change to both (or one)."""
    losses = []
    for mode, s, rate in zip(("alias", "clone"), seed, lr):
        torch.manual_seed(0)
        model = resnet(block, [1, 1], in_channels=1, base_width=8, stem="small", identity=mode, inplace=inplace)
        losses.append(train(model, small_data, epochs=1, seed=s, lr=rate, progress=False).step_loss)
    return losses[0] == losses[1]


def test_10_1_the_answer_is_what_training_does(small_data):
    """Each option, run: A, B, C and E keep the runs identical; D and F do not."""
    outcome = {
        "A": _pair(small_data, seed=(1, 1)),
        "B": _pair(small_data, inplace=False),
        "C": _pair(small_data, block=Bottleneck),
        "D": _pair(small_data, block=ReluFirstBlock),
        "E": _pair(small_data, block=PreActBlock),
        "F": _pair(small_data, lr=(1e-3, 2e-3)),
    }
    assert {k for k, same in outcome.items() if same} == {"A", "B", "C", "E"}


# --- 10.2 -------------------------------------------------------------------------

def out_of_place():
    return resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=24, stem="small", inplace=False)


def out_of_place_and_clone():
    return resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=24, stem="small", identity="clone",
                  inplace=False)


def out_of_place_seeded():
    torch.manual_seed(5)
    return resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=24, stem="small", identity="alias",
                  inplace=False)


@pytest.mark.parametrize("answer", [out_of_place, out_of_place_and_clone, out_of_place_seeded])
def test_10_2_right(answer, capsys):
    assert check("10.2", answer)


def clone_only():
    return resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=24, stem="small", identity="clone")


def the_bug():
    return resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=24, stem="small")


def basic_blocks():
    return resnet(BasicBlock, [1, 1], in_channels=1, base_width=24, stem="small")


def wrong_width():
    return resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=16, stem="small", inplace=False)


def returns_none():
    pass


@pytest.mark.parametrize("answer,says", [
    (clone_only, "still wrote into the block input"),
    (the_bug, "skip still sees relu(x)"),
    (basic_blocks, "notebook's network"),
    (wrong_width, "notebook's network"),
    (returns_none, "nn.Module"),
    (out_of_place(), "the function"),
])
def test_10_2_wrong(answer, says, capsys):
    assert not check("10.2", answer)
    out = capsys.readouterr().out
    assert says in out
    assert "inplace=False" not in out


def test_10_2_leaves_the_global_rng_alone(capsys):
    torch.manual_seed(123)
    expected = torch.randn(3)
    torch.manual_seed(123)
    assert check("10.2", out_of_place_seeded)
    assert torch.equal(torch.randn(3), expected)
