"""Exercise checks for notebook 09, ResNet blocks."""

from __future__ import annotations

from typing import Any

from clonelab.exercises import exercise, whole_number


# --- 09.1: the total extra bytes of the clone in a ResNet-18 forward pass ----------

def _block_inputs_resnet18(batch: int, size: int) -> list[int]:
    """nbytes of every BasicBlock's input in resnet18 (torchvision's layout), from shapes alone."""
    import torch

    from clonelab.cost import block_inputs
    from clonelab.models import BasicBlock, resnet

    net = resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000).to("meta")  # no memory, no compute
    return list(block_inputs(net, torch.empty(batch, 3, size, size, device="meta")).values())


@exercise("09.1", hint="the clone copies each block's input once; add up the bytes of the inputs of "
                       "all 8 blocks (forward pre-hooks on the blocks see them)")
def _total_extra(answer):
    given = whole_number(answer)
    if given is None:
        return "answer should be a whole number of bytes (an int)"
    sizes = _block_inputs_resnet18(8, 224)
    total = sum(sizes)
    if given == total:
        return True
    if given * 4 == total:
        return "that looks like a number of elements; the question asks for bytes (float32: 4 bytes each)"
    if given == 8 * 3 * 224 * 224 * 4 * len(sizes):
        return "the blocks' inputs are not the images: the stem changes their shape before the first block"
    if given in sizes:
        return "that is the input of one block; every block clones its own input"
    peak = sum(sizes[i] for i in (2, 4, 6, 7))  # downsampling blocks + the last block
    if given == peak:
        return "that is the extra at the peak; the question asks for the total allocated"
    return False


# --- 09.2: does a block write into its input? ---------------------------------------

def _cases():
    """(description, make_block, expected) for 09.2; each make_block() builds a fresh, seeded block."""
    import torch
    from torch import nn

    from clonelab.models import BasicBlock, Bottleneck, PreActBlock, ReluFirstBlock

    class SameValues(nn.Module):
        """Writes into x in place, but writes the values it already had."""

        def forward(self, x):
            x.mul_(1.0)
            return x * 2

    class ThroughAView(nn.Module):
        """Writes into a view of x: x shares the view's version counter."""

        def forward(self, x):
            x[:, :1] = x[:, :1].abs()
            return x + 1

    class OnAClone(nn.Module):
        """Writes in place, but into its own clone of x."""

        def forward(self, x):
            y = x.clone()
            y.relu_()
            return y

    def seeded(make):
        def build():
            torch.manual_seed(9)
            return make()
        return build

    return [
        ("BasicBlock(8, 8)", seeded(lambda: BasicBlock(8, 8)), False),
        ("a block that writes in place into its own clone of x", seeded(OnAClone), False),
        ("ReluFirstBlock(8, 8) with an in-place ReLU", seeded(lambda: ReluFirstBlock(8, 8)), True),
        ("Bottleneck(8, 2)", seeded(lambda: Bottleneck(8, 2)), False),
        ("PreActBlock(8, 8)", seeded(lambda: PreActBlock(8, 8)), False),
        ("ReluFirstBlock(8, 8, inplace=False)", seeded(lambda: ReluFirstBlock(8, 8, inplace=False)), False),
        ("a block whose in-place write keeps x's values (x.mul_(1.0))", seeded(SameValues), True),
        ("a block that writes into a view of x", seeded(ThroughAView), True),
    ]


def _as_bool(value: Any) -> bool | None:
    import numpy as np
    import torch

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.dtype == torch.bool:
        return bool(value.item())
    return None


@exercise("09.2", hint="an in-place op can leave the values as they were; look for something that counts "
                       "in-place ops on a tensor and its views, not at the values")
def _writes_into_input(answer):
    import torch

    if not callable(answer):
        return "answer should be the function writes_into_input itself (no parentheses)"
    # The blocks are built from a fixed seed; fork_rng puts the reader's random state back afterwards.
    with torch.random.fork_rng(devices=[]):
        return _judge_writes(answer)


def _judge_writes(answer):
    import torch

    for description, make, expected in _cases():
        g = torch.Generator().manual_seed(2)
        x = torch.randn(2, 8, 6, 6, generator=g)  # negative values too, so a ReLU changes them
        result = _as_bool(answer(make(), x))
        if result is None:
            return "writes_into_input should return True or False"
        if result != expected:
            if description.startswith("a block whose in-place write keeps"):
                return f"wrong for {description}: its values do not change, but it does write into x"
            if description.startswith("a block that writes into a view"):
                return f"wrong for {description}: a write through a view is a write into x"
            said = "wrote into x" if result else "only read x"
            return f"wrong for {description}: your function says it {said}"
    return True


# --- 09.3: what the graph holds after a forward pass -------------------------------

_X_NBYTES = 8 * 64 * 32 * 32 * 4


@exercise("09.3", hint="the clone lives until the block returns, unless something saved it for backward; "
                       "look at what a convolution saves")
def _held_after_forward(answer):
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        return "answer should be a tuple (plain_block, downsampling_block) of two ints"
    plain, down = (whole_number(v) for v in answer)
    if plain is None or down is None:
        return "both entries should be whole numbers of bytes"
    if (plain, down) == (0, _X_NBYTES):
        return True
    if plain != 0:
        if plain == _X_NBYTES:
            return "the plain block's clone is freed when the block returns: nothing in its graph refers to it"
        return "the plain block's entry is not right yet"
    if down == 0:
        return "in the downsampling block the clone goes into the shortcut's 1x1 convolution: look at what that convolution keeps"
    if down * 4 == _X_NBYTES:
        return "count bytes, not elements"
    return "the downsampling block's entry is not right yet: start from the size of one copy of the input"
