"""Exercises of notebook 09 (ResNet blocks): right answers pass, wrong ones get a hint."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from clonelab import check, measure, watch_ops
from clonelab.models import BasicBlock, conv1x1, resnet

# --- 09.1 -------------------------------------------------------------------------

RIGHT_09_1 = 29_704_192  # 3 x 6,422,528 + 2 x 3,211,264 + 2 x 1,605,632 + 802,816


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


@pytest.mark.parametrize("answer", [RIGHT_09_1, np.int64(RIGHT_09_1), float(RIGHT_09_1), torch.tensor(RIGHT_09_1)])
def test_09_1_right(answer, capsys):
    assert check("09.1", answer)


@pytest.mark.parametrize("answer,says", [
    (RIGHT_09_1 // 4, "elements"),
    (6_422_528, "one block"),
    (12_042_240, "peak"),
    (8 * 3 * 224 * 224 * 4 * 8, "images"),
    (RIGHT_09_1 + 1, ""),
    ("29704192", "whole number"),
    (True, "whole number"),
    (RIGHT_09_1 + 0.5, "whole number"),
])
def test_09_1_wrong(answer, says, capsys):
    assert not check("09.1", answer)
    out = capsys.readouterr().out
    assert says in out and "29704192" not in out.replace(",", "")


# --- 09.2 -------------------------------------------------------------------------

def by_version(block, x):
    before = x._version
    block(x)
    return x._version != before


def by_version_bool_tensor(block, x):
    before = x._version
    block(x)
    return torch.tensor(x._version > before)


def by_watching(block, x):
    with watch_ops(x=x) as log:
        block(x)
    return any(r.kind == "IN-PLACE" and r.target is not None and r.target.endswith("x") for r in log)


def by_version_numpy(block, x):
    before = x._version
    block(x)
    return np.bool_(x._version > before)


@pytest.mark.parametrize("answer", [by_version, by_version_bool_tensor, by_watching, by_version_numpy])
def test_09_2_right(answer, capsys):
    assert check("09.2", answer)


def by_values(block, x):
    before = x.clone()
    block(x)
    return not torch.equal(before, x)


def by_data_ptr(block, x):
    before = x.data_ptr()
    block(x)
    return x.data_ptr() != before


def by_watching_x_only(block, x):
    with watch_ops(x=x) as log:
        block(x)
    return any(r.kind == "IN-PLACE" and r.target == "x" for r in log)


def always_false(block, x):
    return False


def returns_a_string(block, x):
    return "no"


@pytest.mark.parametrize("answer,says", [
    (by_values, "values do not change"),
    (by_data_ptr, "your function says"),
    (by_watching_x_only, "view"),
    (always_false, "your function says"),
    (returns_a_string, "True or False"),
    ("by_version", "the function"),
])
def test_09_2_wrong(answer, says, capsys):
    assert not check("09.2", answer)
    out = capsys.readouterr().out
    assert says in out
    assert "_version" not in out


def test_09_2_cases_are_what_torch_does():
    from clonelab.exercises.nb09 import _cases

    for description, make, expected in _cases():
        x = torch.randn(2, 8, 6, 6)
        assert by_version(make(), x) == expected, description


def test_09_2_leaves_the_global_rng_alone(capsys):
    torch.manual_seed(123)
    expected = torch.randn(3)
    torch.manual_seed(123)
    assert check("09.2", by_version)
    assert torch.equal(torch.randn(3), expected)


# --- 09.3 -------------------------------------------------------------------------

X_NBYTES = 8 * 64 * 32 * 32 * 4


def test_09_3_the_expected_numbers_are_measured():
    torch.manual_seed(0)
    x = torch.randn(8, 64, 32, 32)
    makers = {"plain": lambda mode: BasicBlock(64, 64, identity=mode),
              "down": lambda mode: BasicBlock(64, 128, stride=2, identity=mode,
                                              downsample=nn.Sequential(conv1x1(64, 128, 2), nn.BatchNorm2d(128)))}
    held = {}
    for name, make in makers.items():
        for mode in ("alias", "clone"):
            block = make(mode)
            block(x)
            with measure() as m:
                out = block(x)  # noqa: F841  (kept: the graph stays alive)
            held[name, mode] = m.net
    assert (held["plain", "clone"] - held["plain", "alias"], held["down", "clone"] - held["down", "alias"]) \
        == (0, X_NBYTES)


@pytest.mark.parametrize("answer", [(0, X_NBYTES), [0, X_NBYTES], (np.int64(0), torch.tensor(X_NBYTES))])
def test_09_3_right(answer, capsys):
    assert check("09.3", answer)


@pytest.mark.parametrize("answer,says", [
    ((X_NBYTES, X_NBYTES), "freed when the block returns"),
    ((0, 0), "shortcut"),
    ((X_NBYTES, 0), "freed when the block returns"),
    ((0, X_NBYTES // 4), "bytes, not elements"),
    ((0, X_NBYTES * 2), "one copy"),
    ((0,), "tuple"),
    ("0, 2097152", "tuple"),
    ((0, "2097152"), "whole numbers"),
])
def test_09_3_wrong(answer, says, capsys):
    assert not check("09.3", answer)
    out = capsys.readouterr().out
    assert says in out and str(X_NBYTES) not in out
