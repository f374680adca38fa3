"""model_clone_cost: the extra bytes of identity = x.clone() in a whole network, and its argument checks."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from clonelab import model_clone_cost
from clonelab.models import (BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock, SecondCodeBlock, SecondCodeBottleneck,
                             resnet)


def tiny(block=BasicBlock, layers=(1, 1)):
    torch.manual_seed(0)
    return resnet(block, list(layers), in_channels=1, base_width=4, stem="small")


def downsampling(model):
    return [n for n, m in model.named_modules()
            if isinstance(m, (BasicBlock, Bottleneck)) and m.downsample is not None]


@pytest.mark.parametrize("block,layers", [(BasicBlock, (2, 1)), (Bottleneck, (1, 2))])
@pytest.mark.parametrize("backward", [False, True])
def test_extra_allocation_is_the_sum_of_the_block_inputs(block, layers, backward):
    model = tiny(block, layers)
    x = torch.randn(3, 1, 8, 8)
    cost = model_clone_cost(model, x, backward=backward, repeat=0)
    assert cost["extra_allocated"] == cost["expected_extra"] == sum(cost["blocks"].values()) > 0
    assert list(cost["blocks"]) == [n for n, m in model.named_modules() if isinstance(m, block)]
    # At the clone copy's peak, the clones alive there are all it holds more than the alias copy
    # at the same point; the alias copy's own peak may fall elsewhere, a little higher.
    assert 0 <= cost["extra_peak"] <= sum(cost["blocks"][b] for b in cost["live_at_peak"])
    assert cost["peak_phase"] in ("forward", "backward")
    assert cost["extra_requested"] is None and cost["time_ratio"] is None


def test_forward_keeps_the_clones_of_downsampling_blocks_for_backward():
    model = tiny(SecondCodeBlock, (2, 2))
    cost = model_clone_cost(model, torch.randn(2, 1, 8, 8), repeat=0)
    kept = downsampling(model)
    assert kept == ["layer2.0"]
    assert cost["extra_net"] == sum(cost["blocks"][b] for b in kept)
    assert cost["peak_phase"] == "forward"
    assert set(kept) <= set(cost["live_at_peak"])


def test_resnet18_forward_peak_is_the_saved_clones_plus_the_last_block():
    torch.manual_seed(0)
    model = resnet(SecondCodeBlock, [2, 2, 2, 2], num_classes=10)
    cost = model_clone_cost(model, torch.randn(2, 3, 32, 32), repeat=0)
    assert cost["live_at_peak"] == downsampling(model) + ["layer4.1"]
    assert cost["extra_peak"] == sum(cost["blocks"][b] for b in cost["live_at_peak"])


def test_after_backward_nothing_extra_is_held():
    cost = model_clone_cost(tiny(), torch.randn(2, 1, 8, 8), backward=True, repeat=0)
    assert cost["extra_net"] == 0


def test_timings_and_the_callers_model_is_left_alone():
    model = tiny()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.randn(2, 1, 8, 8)
    cost = model_clone_cost(model, x, backward=True, repeat=2)
    assert cost["alias_time_s"] > 0 and cost["clone_time_s"] > 0
    assert cost["time_ratio"] == pytest.approx(cost["clone_time_s"] / cost["alias_time_s"])
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(p.grad is None for p in model.parameters())
    assert {m.identity_mode for m in model.modules() if isinstance(m, BasicBlock)} == {"alias"}
    assert x._version == 0


def test_eval_mode_is_kept():
    model = tiny().eval()
    cost = model_clone_cost(model, torch.randn(2, 1, 8, 8), repeat=0)
    assert cost["extra_allocated"] == cost["expected_extra"]
    assert not model.training


def test_arguments_are_checked():
    model, x = tiny(), torch.randn(2, 1, 8, 8)
    with pytest.raises(TypeError, match="repeat must be an int"):
        model_clone_cost(model, x, repeat=2.0)
    with pytest.raises(ValueError, match="repeat must be an int >= 0"):
        model_clone_cost(model, x, repeat=-1)
    with pytest.raises(TypeError, match="backward must be True or False, got 'no'"):   # a str is truthy
        model_clone_cost(model, x, backward="no")
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        model_clone_cost(model, x, device="meta")
    with pytest.raises(RuntimeError, match="gpu"):               # torch.device's own message names it
        model_clone_cost(model, x, device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="needs a CUDA GPU"):
            model_clone_cost(model, x, device="cuda")


def test_threads_are_set_for_the_call_and_restored():
    before = torch.get_num_threads()
    cost = model_clone_cost(tiny(), torch.randn(2, 1, 8, 8), repeat=1, threads=1)
    assert torch.get_num_threads() == before
    assert cost["extra_allocated"] == cost["expected_extra"]


def test_models_without_switchable_blocks_are_refused():
    x = torch.randn(2, 1, 8, 8)
    with pytest.raises(ValueError, match="found none"):
        model_clone_cost(nn.Sequential(nn.Conv2d(1, 2, 3)), x)
    for block in (PreActBlock, ReluFirstBlock):
        with pytest.raises(ValueError, match=f"is a {block.__name__}"):
            model_clone_cost(tiny(block), x)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda():
    cost = model_clone_cost(tiny(), torch.randn(2, 1, 8, 8), device="cuda", backward=True, repeat=1)
    # Each clone is rounded up to 512 bytes; one of more than 1 MiB may get a block up to 1 MiB larger.
    large = sum(1 for nbytes in cost["blocks"].values() if nbytes > 2**20)
    assert cost["expected_extra"] <= cost["extra_allocated"] <= cost["expected_extra"] + large * 2**20
    assert cost["extra_requested"] == sum(cost["blocks"].values())
    assert cost["live_at_peak"] is None and cost["time_ratio"] > 0


def test_block_inputs_from_shapes_alone():
    from clonelab import block_inputs
    from clonelab.models import BasicBlock, resnet

    net = resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000).to("meta")
    sizes = block_inputs(net, torch.empty(1, 3, 224, 224, device="meta"))
    assert list(sizes) == [f"layer{i}.{j}" for i in range(1, 5) for j in range(2)]
    assert sizes["layer1.0"] == 64 * 56 * 56 * 4 and sizes["layer4.1"] == 512 * 7 * 7 * 4
    with pytest.raises(ValueError, match="model must contain BasicBlock or Bottleneck"):
        block_inputs(torch.nn.Linear(2, 2), torch.empty(2, 2))
