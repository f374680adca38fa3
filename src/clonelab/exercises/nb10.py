"""Exercise checks for notebook 10, training a small ResNet."""

from __future__ import annotations

import re

from clonelab.exercises import exercise, letters

# --- 10.1: which changes keep alias and clone bitwise identical? -------------------

_OPTIONS = "ABCDEF"
_IDENTICAL = {"A", "B", "C", "E"}  # D: ReluFirstBlock writes into x; F: a different learning rate


@exercise("10.1", hint="ask of each change: does anything now write into a block's input x before the "
                       "addition, or do the two runs now do different things")
def _keeps_identical(answer):
    chosen = letters(answer, _OPTIONS)
    if chosen is None:
        if letters(answer, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") is not None:
            return "the options are A to F"
        return 'answer should be a set of letters, e.g. {"A", "B"}'
    if chosen == _IDENTICAL:
        return True
    if "D" in chosen:
        return "one of your letters makes the block write into its input: the alias then sees the change"
    if "F" in chosen:
        return "one of your letters changes the training of one run only"
    return "some changes that keep the runs identical are missing; try them: each takes a few seconds"


# --- 10.2: the ReLU-first network, fixed without touching the block inputs ----------

TOLERANCE = 1e-5  # absolute and relative, for float32 logits
_WIDTH = 24
_BLOCK_NAME = re.compile(r"layer\d+\.\d+")


@exercise("10.2", hint="there are two fixes for the ReLU-first block; only one of them stops the write "
                       "into the block's input")
def _fixed_model(answer):
    import torch
    from torch import nn

    if isinstance(answer, nn.Module) or not callable(answer):
        return "answer should be the function make_fixed_model itself (no parentheses), not a model"
    # The reader's function may draw random weights; fork_rng puts the random state back afterwards.
    with torch.random.fork_rng(devices=[]):
        return _judge_fixed(answer)


def _judge_fixed(answer):
    import torch
    from torch import nn

    from clonelab.models import ReluFirstBlock, resnet

    model = answer()
    if not isinstance(model, nn.Module):
        return "make_fixed_model() should return the model, an nn.Module"
    # The intended network: every block computes x + F(relu(x)) and only reads x.
    reference = resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=_WIDTH, stem="small", inplace=False)
    try:
        reference.load_state_dict(model.state_dict())
    except RuntimeError:
        return ("build the notebook's network: resnet(ReluFirstBlock, [1, 1], in_channels=1, "
                "base_width=WIDTH, stem=\"small\", ...), with the options that fix it")
    blocks = [(name, m) for name, m in model.named_modules() if _BLOCK_NAME.fullmatch(name)]
    overwritten: list[str] = []
    seen: dict[int, tuple[torch.Tensor, int]] = {}

    def before(module, args):
        seen[id(module)] = (args[0], args[0]._version)

    def after(module, args, output):
        tensor, version = seen.pop(id(module))
        if tensor._version != version:
            overwritten.append(names[id(module)])

    names = {id(m): name for name, m in blocks}
    handles = [h for _, m in blocks for h in (m.register_forward_pre_hook(before), m.register_forward_hook(after))]
    try:
        model.train()
        reference.train()
        x = torch.rand(16, 1, 8, 8, generator=torch.Generator().manual_seed(10))
        out, expected = model(x), reference(x)
        out.sum().backward()  # must not raise
    finally:
        for h in handles:
            h.remove()
    if not isinstance(out, torch.Tensor) or out.shape != expected.shape:
        return "the model should return logits of shape (batch, 10)"
    if not torch.allclose(out, expected, rtol=TOLERANCE, atol=TOLERANCE):
        return "the outputs are not those of x + F(relu(x)) in every block: the skip still sees relu(x)"
    if overwritten:
        which = ", ".join(overwritten)
        return (f"the outputs are right, but {which} still wrote into the block input in place; "
                "a clone of x for the skip does not stop that write")
    return True
