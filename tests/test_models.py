"""Tests for clonelab.models: the toy residual, the blocks and the ResNet builder."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from clonelab.models import (
    BasicBlock,
    Bottleneck,
    PreActBlock,
    ReluFirstBlock,
    SecondCodeBlock,
    SecondCodeBottleneck,
    conv1x1,
    resnet,
    toy_residual,
)
from clonelab.env import torchvision_resnet18

# --- the toy model ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["alias", "clone"])
def test_toy_numbers_match_the_post(mode):
    r = toy_residual(mode)
    assert r.feature.item() == 2.0 and r.feature2.item() == 6.0
    assert r.output_data.item() == 8.0  # the skip carries feature (2), not the input (1)
    assert r.loss.item() == 0.25
    assert r.weight1.grad.item() == -4.0
    assert r.weight2.grad.item() == -2.0


def test_toy_alias_is_the_same_object_clone_is_new_storage():
    alias, clone = toy_residual("alias"), toy_residual("clone")
    assert alias.identity is alias.feature
    assert clone.identity is not clone.feature
    assert clone.identity.data_ptr() != clone.feature.data_ptr()
    assert type(clone.identity.grad_fn).__name__ == "CloneBackward0"


def test_toy_without_backward_leaves_grads_empty():
    r = toy_residual(backward=False)
    assert r.weight1.grad is None and r.weight2.grad is None
    assert r.loss.requires_grad


# --- blocks: alias and clone agree bit for bit --------------------------------


def _projection(inplanes: int, outplanes: int, stride: int) -> nn.Module:
    return nn.Sequential(conv1x1(inplanes, outplanes, stride), nn.BatchNorm2d(outplanes))


BLOCKS = {
    "basic": lambda: BasicBlock(8, 8),
    "basic-downsample": lambda: BasicBlock(8, 16, 2, _projection(8, 16, 2)),
    "bottleneck": lambda: Bottleneck(8, 2),
    "bottleneck-downsample": lambda: Bottleneck(8, 4, 2, _projection(8, 16, 2)),
    "preact": lambda: PreActBlock(8, 8),
    "preact-downsample": lambda: PreActBlock(8, 16, 2, _projection(8, 16, 2)),
}


def _run(block: nn.Module, stem: nn.Module, inp: torch.Tensor):
    """Forward and backward through stem -> block; return what a comparison needs."""
    stem.zero_grad()
    block.zero_grad()
    x = stem(inp)  # x comes from a conv and requires grad, as inside a network
    version = x._version
    out = block(x)
    out.square().sum().backward()
    grads = [p.grad.clone() for p in block.parameters()] + [stem.weight.grad.clone()]
    return out.detach(), grads, x._version - version


@pytest.mark.parametrize("name", BLOCKS)
def test_alias_and_clone_are_bitwise_equal(name):
    torch.manual_seed(0)
    alias = BLOCKS[name]()
    clone = copy.deepcopy(alias)  # same weights, same BN state
    clone.identity_mode = "clone"
    stem = nn.Conv2d(3, 8, 3, padding=1)
    inp = torch.randn(4, 3, 6, 6)

    out_a, grads_a, bumps_a = _run(alias, stem, inp)
    out_c, grads_c, bumps_c = _run(clone, stem, inp)
    assert torch.equal(out_a, out_c)
    assert len(grads_a) == len(grads_c)
    assert all(torch.equal(a, c) for a, c in zip(grads_a, grads_c))
    # The block only reads x: no in-place op touched it, in either mode.
    assert bumps_a == 0 and bumps_c == 0


# --- the ReLU-first bug -------------------------------------------------------


def _relu_first_variants():
    torch.manual_seed(0)
    base = ReluFirstBlock(8, 8)
    stem = nn.Conv2d(3, 8, 3, padding=1)
    inp = torch.randn(2, 3, 5, 5)
    results = {}
    for mode, inplace in [("alias", True), ("clone", True), ("alias", False), ("clone", False)]:
        block = ReluFirstBlock(8, 8, identity=mode, inplace=inplace)
        block.load_state_dict(base.state_dict())  # same weights for all four
        x = stem(inp)  # a fresh x each time: the buggy variant overwrites it
        before = x.detach().clone()
        out = block(x)
        out.sum().backward()  # no error: conv saves its input, not its output
        results[mode, inplace] = (out.detach(), x._version, torch.equal(x.detach(), before))
    return results


def test_relu_first_alias_inplace_is_silently_a_different_model():
    r = _relu_first_variants()
    buggy, out_clone, out_no_inplace = r["alias", True][0], r["clone", True][0], r["alias", False][0]
    assert not torch.equal(buggy, out_clone)
    assert not torch.equal(buggy, out_no_inplace)
    # Both fixes compute x + F(relu(x)), and agree exactly.
    assert torch.equal(out_clone, out_no_inplace)
    assert torch.equal(out_clone, r["clone", False][0])


def test_relu_first_inplace_rewrites_the_callers_x():
    r = _relu_first_variants()
    assert r["alias", True][1] > 0 and not r["alias", True][2]
    # clone protects the identity, not x: x is still overwritten by the ReLU.
    assert r["clone", True][1] > 0 and not r["clone", True][2]
    assert r["alias", False][1:] == (0, True)


def test_relu_first_buggy_block_equals_relu_x_plus_branch():
    torch.manual_seed(0)
    block = ReluFirstBlock(4, 4).eval()
    x = torch.randn(1, 4, 3, 3)
    fixed = copy.deepcopy(block)
    fixed.identity_mode = "clone"
    want = fixed(x.relu())  # relu(x) + F(relu(x)): relu is idempotent
    assert torch.equal(block(x.clone()), want)


def test_relu_first_on_a_leaf_raises_at_once():
    x = torch.randn(1, 4, 3, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ReluFirstBlock(4, 4)(x)


@pytest.mark.parametrize("mode", ["alias", "clone"])
def test_relu_first_after_a_relu_fails_at_backward_even_with_clone(mode):
    stem = nn.Conv2d(3, 4, 3, padding=1)
    x = torch.relu(stem(torch.randn(1, 3, 4, 4)))  # relu saves its output for backward
    out = ReluFirstBlock(4, 4, identity=mode)(x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# --- the ResNet builder --------------------------------------------------------


@pytest.mark.parametrize("block", [BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock])
@pytest.mark.parametrize("stem, size", [("small", 8), ("imagenet", 32)])
@pytest.mark.parametrize("mode", ["alias", "clone"])
def test_resnet_forward_and_backward_shapes(block, stem, size, mode):
    model = resnet(block, [1, 2], num_classes=7, in_channels=1, base_width=4, stem=stem,
                   identity=mode)
    out = model(torch.randn(3, 1, size, size))
    assert out.shape == (3, 7)
    out.sum().backward()  # in particular: no in-place error for the ReLU-first network
    assert all(p.grad is not None for p in model.parameters())


def test_resnet_passes_identity_and_inplace_to_every_block():
    model = resnet(BasicBlock, [2, 2], base_width=4, identity="clone", inplace=False)
    blocks = [m for m in model.modules() if isinstance(m, BasicBlock)]
    assert len(blocks) == 4
    assert all(b.identity_mode == "clone" and not b.relu.inplace for b in blocks)


def test_preactivation_network_has_a_bare_stem_and_a_final_norm():
    model = resnet(PreActBlock, [1, 1], base_width=4, stem="small")
    assert isinstance(model.bn1, nn.Identity) and isinstance(model.relu, nn.Identity)
    assert isinstance(model.final_bn, nn.BatchNorm2d) and model.final_bn.num_features == 8
    plain = resnet(BasicBlock, [1, 1], base_width=4, stem="small")
    assert not hasattr(plain, "final_bn")


def test_downsample_only_where_the_shape_changes():
    model = resnet(BasicBlock, [2, 2], base_width=4)
    assert model.layer1[0].downsample is None  # 4 -> 4 channels, stride 1
    assert isinstance(model.layer2[0].downsample[0], nn.Conv2d)
    assert model.layer2[0].downsample[0].stride == (2, 2)
    assert model.layer2[1].downsample is None


def test_torchvision_init():
    model = resnet(BasicBlock, [1], base_width=4)
    assert all(torch.equal(m.weight, torch.ones_like(m.weight)) and not m.bias.any()
               for m in model.modules() if isinstance(m, nn.BatchNorm2d))


def _count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_resnet18_and_resnet50_sizes_and_names():
    # Built on the meta device: shapes and names without allocating 100 MB.
    with torch.device("meta"):
        r18 = resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000)
        r50 = resnet(Bottleneck, [3, 4, 6, 3], num_classes=1000)
    assert _count(r18) == 11_689_512
    assert _count(r50) == 25_557_032
    children = ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4",
                "avgpool", "fc"]
    assert [n for n, _ in r18.named_children()] == children
    assert [n for n, _ in r50.named_children()] == children
    s18, s50 = r18.state_dict(), r50.state_dict()
    assert len(s18) == 122 and len(s50) == 320
    assert s18["layer2.0.downsample.0.weight"].shape == (128, 64, 1, 1)
    assert s18["layer2.0.downsample.1.running_mean"].shape == (128,)
    assert s50["layer4.2.conv3.weight"].shape == (2048, 512, 1, 1)
    assert s50["fc.weight"].shape == (1000, 2048)
    assert r50.layer3[0].conv2.stride == (2, 2)  # stride on the 3x3 conv ("v1.5")


def test_torchvision_state_dicts_load_and_agree():
    models = pytest.importorskip("torchvision.models")
    for ours, theirs in [(resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000), models.resnet18()),
                         (resnet(Bottleneck, [3, 4, 6, 3], num_classes=1000), models.resnet50())]:
        sd_ours, sd_theirs = ours.state_dict(), theirs.state_dict()
        assert list(sd_ours) == list(sd_theirs)
        assert all(sd_ours[k].shape == sd_theirs[k].shape for k in sd_ours)
        ours.load_state_dict(sd_theirs, strict=True)
        ours.eval(), theirs.eval()
        x = torch.randn(1, 3, 64, 64)
        with torch.no_grad():
            assert torch.equal(ours(x), theirs(x))


def test_torchvision_resnet18_is_torchvisions_model_in_evaluation_mode():
    pytest.importorskip("torchvision.models")
    theirs = torchvision_resnet18()
    assert type(theirs).__module__ == "torchvision.models.resnet" and not theirs.training
    resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000).load_state_dict(theirs.state_dict(), strict=True)


def test_torchvision_resnet18_without_torchvision_says_so_and_returns_none(monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name.startswith("torchvision"):
            raise RuntimeError("operator torchvision::nms does not exist")   # a build for another torch
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing_import)
    assert torchvision_resnet18() is None
    assert "torchvision could not be imported (RuntimeError)" in capsys.readouterr().out


# --- argument errors ------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda v: toy_residual(v),
    lambda v: BasicBlock(4, 4, identity=v),
    lambda v: Bottleneck(4, 4, identity=v),
    lambda v: PreActBlock(4, 4, identity=v),
    lambda v: ReluFirstBlock(4, 4, identity=v),
    lambda v: resnet(BasicBlock, [1], identity=v),
])
def test_unknown_identity_mode(make):
    with pytest.raises(ValueError, match=r'identity must be "alias" or "clone", got \'copy\''):
        make("copy")
    with pytest.raises(ValueError, match="identity must be"):
        make(0)   # resnet reads None as "the block's own default"


def test_the_block_stores_its_mode_as_identity_mode():
    block = BasicBlock(4, 4, identity="clone")
    assert block.identity_mode == "clone" and not hasattr(block, "identity")
    assert "identity='clone'" in repr(block)


class _NotABlock(nn.Module):
    expansion = 1


@pytest.mark.parametrize("kwargs, error, match", [
    ({"block": BasicBlock(4, 4)}, TypeError, "block must be a block class"),
    ({"block": _NotABlock}, TypeError, "block must be a block class"),
    ({"block": int}, TypeError, "block must be a block class"),
    ({"layers": 2}, ValueError, "layers must be a non-empty list of positive ints"),
    ({"layers": "22"}, ValueError, "layers must be a non-empty list"),
    ({"layers": []}, ValueError, "layers must be a non-empty list"),
    ({"layers": [2, 0]}, ValueError, "layers must be a non-empty list"),
    ({"layers": [2, 1.0]}, ValueError, "layers must be a non-empty list"),
    ({"stem": "cifar"}, ValueError, 'stem must be "imagenet" or "small", got \'cifar\''),
    ({"num_classes": 0}, ValueError, "num_classes must be a positive int, got 0"),
    ({"in_channels": 3.0}, TypeError, "in_channels must be a positive int"),
    ({"base_width": -4}, ValueError, "base_width must be a positive int"),
    ({"inplace": "yes"}, TypeError, "inplace must be True or False, got 'yes'"),
])
def test_resnet_argument_errors(kwargs, error, match):
    args = {"block": BasicBlock, "layers": [1, 1], **kwargs}
    block, layers = args.pop("block"), args.pop("layers")
    with pytest.raises(error, match=match):
        resnet(block, layers, **args)


@pytest.mark.parametrize("block", [BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock])
@pytest.mark.parametrize("args, kwargs, match", [((8, -1), {}, "planes must be a positive int"),
                                                 ((0, 8), {}, "inplanes must be a positive int"),
                                                 ((8, 8, 0), {}, "stride must be a positive int"),
                                                 ((8, 8), {"inplace": 1}, "inplace must be True or False")])
def test_every_block_names_a_bad_size_or_flag(block, args, kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        block(*args, **kwargs)


@pytest.mark.parametrize("block", [SecondCodeBlock, SecondCodeBottleneck])
def test_the_second_code_builds_a_network_of_clones(block):
    model = resnet(block, [1, 1], in_channels=1, base_width=4, stem="small")
    assert type(model.layer2[0]) is block and model.layer2[0].identity_mode == "clone"
    assert model(torch.randn(2, 1, 8, 8)).shape == (2, 10)
    assert resnet(block, [1], identity="alias").layer1[0].identity_mode == "alias"


@pytest.mark.parametrize("torchvision_block, second_code, planes", [(BasicBlock, SecondCodeBlock, 8),
                                                                    (Bottleneck, SecondCodeBottleneck, 2)])
def test_what_the_downsample_reads(torchvision_block, second_code, planes):
    """torchvision's blocks feed the shortcut `x`; the post's second code feeds it `identity`, the clone."""
    seen = []
    torch.manual_seed(0)
    x = torch.randn(2, 4, 6, 6)
    outputs = []
    for cls in (torchvision_block, second_code):
        torch.manual_seed(1)
        down = nn.Sequential(conv1x1(4, planes * cls.expansion, 2), nn.BatchNorm2d(planes * cls.expansion))
        b = cls(4, planes, stride=2, downsample=down, identity="clone")
        down.register_forward_pre_hook(lambda module, args: seen.append(args[0] is x))
        outputs.append(b(x))
    assert seen == [True, False]                       # x itself, then the clone
    assert torch.equal(outputs[0], outputs[1])         # the same numbers either way
