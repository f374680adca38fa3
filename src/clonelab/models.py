"""Models for the series: the blog post's toy residual, ResNet blocks, a ResNet builder.

Every model takes ``identity="alias"`` (``identity = x``, as torchvision writes it)
or ``identity="clone"`` (``identity = x.clone()``), so the two can be compared
bit for bit. The blocks keep torchvision's module and parameter names, so a
torchvision ``state_dict`` loads into them unchanged.

>>> import torch
>>> block = BasicBlock(4, 4, identity="clone")
>>> block(torch.randn(2, 4, 8, 8)).shape
torch.Size([2, 4, 8, 8])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor, nn
from clonelab._checks import require_bool, require_int

__all__ = [
    "IDENTITY_MODES",
    "ToyResidual",
    "toy_residual",
    "conv3x3",
    "conv1x1",
    "BasicBlock",
    "Bottleneck",
    "PreActBlock",
    "ReluFirstBlock",
    "ResNet",
    "resnet",
]

IdentityMode = Literal["alias", "clone"]
IDENTITY_MODES: tuple[str, ...] = ("alias", "clone")


# --- argument checks -------------------------------------------------------
# Small and explicit, so that a wrong argument fails at construction time with
# a message that names it, instead of deep inside a forward pass.


def _check_identity(identity: object) -> str:
    if not isinstance(identity, str) or identity not in IDENTITY_MODES:
        kind = ValueError if isinstance(identity, str) else TypeError
        raise kind(f'identity must be "alias" or "clone", got {identity!r}')
    return identity


def _check_downsample(downsample: object) -> nn.Module | None:
    if downsample is not None and not isinstance(downsample, nn.Module):
        raise TypeError(
            f"downsample must be None or an nn.Module, got {type(downsample).__name__}"
        )
    return downsample


def _check_block_args(inplanes: object, planes: object, stride: object,
                      downsample: object) -> None:
    require_int(inplanes, "inplanes")
    require_int(planes, "planes")
    require_int(stride, "stride")
    _check_downsample(downsample)


def take_identity(x: Tensor, mode: str) -> Tensor:
    """The tensor a block keeps for its shortcut: ``x`` itself for mode "alias", a copy for "clone".

    >>> x = torch.ones(2)
    >>> take_identity(x, "alias") is x, take_identity(x, "clone") is x
    (True, False)
    """
    if mode not in ("alias", "clone"):
        raise ValueError(f"mode must be 'alias' or 'clone', got {mode!r}")
    # The whole question of the series in one line: "alias" binds a second
    # name to the same tensor (no op runs, no memory is used); "clone" copies
    # it into new storage, which later in-place writes to x cannot reach.
    return x if mode == "alias" else x.clone()


# --- the blog post's toy model ---------------------------------------------


@dataclass
class ToyResidual:
    """Every tensor of the toy residual model, under the blog post's names.

    >>> r = toy_residual()
    >>> r.loss.item()
    0.25
    """

    input_data: Tensor
    weight1: Tensor
    weight2: Tensor
    target_data: Tensor
    feature: Tensor
    identity: Tensor
    feature2: Tensor
    output_data: Tensor
    loss: Tensor


def toy_residual(identity: IdentityMode = "alias", *, backward: bool = True) -> ToyResidual:
    """Run the blog post's one-number residual model and return all its tensors.

    ``output = feature + weight2 * feature`` with ``feature = weight1 * input``,
    so the skip connection carries ``feature`` (= 2), not the input: the output
    is 2 + 3 * 2 = 8. The model contains no in-place op, so ``"alias"`` and
    ``"clone"`` must give the same numbers: output 8, loss 0.25,
    ``weight1.grad`` -4 and ``weight2.grad`` -2.

    >>> r = toy_residual("clone")
    >>> r.output_data.item(), r.loss.item(), r.weight1.grad.item(), r.weight2.grad.item()
    (8.0, 0.25, -4.0, -2.0)
    >>> alias = toy_residual("alias")
    >>> alias.identity is alias.feature, r.identity is r.feature
    (True, False)
    """
    mode = _check_identity(identity)
    require_bool(backward, "backward")
    input_data = torch.tensor([1.0])
    weight1 = torch.tensor([2.0], requires_grad=True)
    weight2 = torch.tensor([3.0], requires_grad=True)
    target_data = torch.tensor([8.5])

    feature = weight1 * input_data
    identity_t = take_identity(feature, mode)
    feature2 = weight2 * feature
    output_data = identity_t + feature2
    loss = (output_data - target_data) ** 2
    if backward:
        loss.backward()
    return ToyResidual(
        input_data=input_data,
        weight1=weight1,
        weight2=weight2,
        target_data=target_data,
        feature=feature,
        identity=identity_t,
        feature2=feature2,
        output_data=output_data,
        loss=loss,
    )


# --- convolutions ----------------------------------------------------------


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1) -> nn.Conv2d:
    """A 3x3 convolution with padding 1 and no bias (the BatchNorm after it has one).

    >>> conv3x3(3, 8, stride=2)
    Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)
    """
    for name, value in [("in_planes", in_planes), ("out_planes", out_planes),
                        ("stride", stride), ("groups", groups)]:
        require_int(value, name)
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride,
                     padding=1, groups=groups, bias=False)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """A 1x1 convolution with no bias, used to change channels or to downsample.

    >>> conv1x1(8, 16)
    Conv2d(8, 16, kernel_size=(1, 1), stride=(1, 1), bias=False)
    """
    for name, value in [("in_planes", in_planes), ("out_planes", out_planes), ("stride", stride)]:
        require_int(value, name)
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


# --- ResNet blocks ----------------------------------------------------------


class _ResidualBlock(nn.Module):
    """What the blocks share: the argument checks, the identity mode, the stride, and ``extra_repr``.

    Each block registers its own layers, then ``downsample`` last, so that its
    children (and state_dict keys) come in torchvision's order.
    """

    # What BasicBlock's and Bottleneck's downsample reads: "identity" here (a clone, when one is taken, is the
    # shortcut convolution's input and lives until its backward), "x" in torchvision (an unused clone is then
    # freed inside the block). A subclass that sets "x" has torchvision's line (notebook 09, the benchmark).
    shortcut_input: str = "identity"

    def __init__(self, inplanes: int, planes: int, stride: int, downsample: nn.Module | None,
                 identity: IdentityMode, inplace: bool) -> None:
        super().__init__()
        _check_block_args(inplanes, planes, stride, downsample)
        self.identity = _check_identity(identity)
        require_bool(inplace, "inplace")
        self.stride = stride

    def extra_repr(self) -> str:
        return f"identity={self.identity!r}"


class BasicBlock(_ResidualBlock):
    """The two-conv ResNet block (He et al. 2015), laid out like torchvision's.

    ``identity="alias"`` is torchvision's ``identity = x``. It is safe here
    because the block only *reads* ``x``; the in-place writes (``out +=`` and
    the ReLUs) touch tensors that no backward formula needs. ``"clone"`` gives
    bitwise-identical outputs and gradients and costs ``x.nbytes`` more.

    >>> import torch
    >>> block = BasicBlock(8, 8)
    >>> x = torch.randn(2, 8, 4, 4)
    >>> block(x).shape, x._version
    (torch.Size([2, 8, 4, 4]), 0)
    """

    expansion: int = 1
    preactivation: bool = False

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        *,
        identity: IdentityMode = "alias",
        inplace: bool = True,
    ) -> None:
        super().__init__(inplanes, planes, stride, downsample, identity, inplace)
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=inplace)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x: Tensor) -> Tensor:
        identity = take_identity(x, self.identity)  # taken first, as in torchvision

        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:  # torchvision's blocks: self.downsample(x)
            identity = self.downsample(identity if self.shortcut_input == "identity" else x)

        out += identity  # in place, into bn2's output: BN's backward does not need it
        return self.relu(out)  # in place, into the sum: add's backward saves nothing


class Bottleneck(_ResidualBlock):
    """The 1x1-3x3-1x1 ResNet block, with the stride on the 3x3 conv (torchvision's "v1.5").

    The inner width is ``int(planes * base_width / 64) * groups`` and the block
    outputs ``planes * 4`` channels. The identity logic is the same as in
    :class:`BasicBlock`.

    >>> import torch
    >>> block = Bottleneck(16, 4)
    >>> block(torch.randn(2, 16, 4, 4)).shape
    torch.Size([2, 16, 4, 4])
    """

    expansion: int = 4
    preactivation: bool = False

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        groups: int = 1,
        base_width: int = 64,
        *,
        identity: IdentityMode = "alias",
        inplace: bool = True,
    ) -> None:
        super().__init__(inplanes, planes, stride, downsample, identity, inplace)
        require_int(base_width, "base_width")
        require_int(groups, "groups")
        width = int(planes * (base_width / 64.0)) * groups
        if width < 1:
            raise ValueError(
                f"planes * base_width / 64 must be at least 1, got planes={planes}, "
                f"base_width={base_width}"
            )
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = conv3x3(width, width, stride, groups)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=inplace)
        self.downsample = downsample

    def forward(self, x: Tensor) -> Tensor:
        identity = take_identity(x, self.identity)

        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(identity if self.shortcut_input == "identity" else x)

        out += identity
        return self.relu(out)


class PreActBlock(_ResidualBlock):
    """The pre-activation block of He et al. 2016 ("Identity Mappings in Deep Residual Networks").

    BN and ReLU come *before* each conv, and nothing follows the addition, so
    the skip path is a clean identity. The block reads ``x`` only (``bn1``
    makes a new tensor before the in-place ReLU), so the alias is safe. With a
    ``downsample``, the shortcut is computed from the pre-activated tensor, as
    in the paper.

    >>> import torch
    >>> block = PreActBlock(8, 8)
    >>> block(torch.randn(2, 8, 4, 4)).shape
    torch.Size([2, 8, 4, 4])
    """

    expansion: int = 1
    # resnet() reads this: the stem then ends at its conv, and a final BN+ReLU
    # runs before pooling.
    preactivation: bool = True

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        *,
        identity: IdentityMode = "alias",
        inplace: bool = True,
    ) -> None:
        super().__init__(inplanes, planes, stride, downsample, identity, inplace)
        self.bn1 = nn.BatchNorm2d(inplanes)
        self.relu = nn.ReLU(inplace=inplace)
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.downsample = downsample

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(x))
        if self.downsample is not None:
            shortcut = self.downsample(out)
        else:
            shortcut = take_identity(x, self.identity)

        out = self.conv2(self.relu(self.bn2(self.conv1(out))))
        out += shortcut  # into conv2's output, which conv's backward does not need
        return out


class ReluFirstBlock(_ResidualBlock):
    """A residual block whose branch starts with a ReLU applied to the block input.

    This is a bug found in real code (rosinality/vq-vae-2-pytorch, issue 60):
    the branch begins with ``nn.ReLU(inplace=True)``, and that ReLU runs on
    ``x`` itself. The block is meant to compute ``x + F(relu(x))``. What it
    computes depends on the options:

    * ``identity="alias", inplace=True``: the in-place ReLU rewrites ``x``, and
      ``identity`` is the same tensor, so the block silently computes
      ``relu(x) + F(relu(x))``. No error is raised (when ``x`` came from an op
      that did not save its output), and the caller's ``x`` is changed too:
      its ``_version`` goes up.
    * ``identity="clone"`` or ``inplace=False``: ``x + F(relu(x))``, as meant.
      (With clone the caller's ``x`` is still overwritten; only ``inplace=False``
      leaves it alone.)

    If ``x`` is a leaf that requires grad, the in-place ReLU raises at once.
    If ``x`` is the output of an op that saved it for backward (a ReLU, a
    sigmoid), backward raises, with or without clone. That is why
    :func:`resnet` ends its stem at the conv for this block.

    >>> import torch
    >>> x = torch.randn(2, 4, 4, 4)
    >>> _ = ReluFirstBlock(4, 4)(x)  # the default: identity="alias", inplace=True
    >>> x._version > 0, bool((x >= 0).all())
    (True, True)
    """

    expansion: int = 1
    preactivation: bool = True

    def __init__(
        self,
        inplanes: int,
        planes: int,
        stride: int = 1,
        downsample: nn.Module | None = None,
        *,
        identity: IdentityMode = "alias",
        inplace: bool = True,
    ) -> None:
        super().__init__(inplanes, planes, stride, downsample, identity, inplace)
        self.relu = nn.ReLU(inplace=inplace)
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x: Tensor) -> Tensor:
        identity = take_identity(x, self.identity)

        out = self.relu(x)  # the bug: with inplace=True this overwrites x, and an alias with it
        out = self.relu(self.bn1(self.conv1(out)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(identity)

        out += identity
        return out


# --- the ResNet builder ------------------------------------------------------

_STEMS = ("imagenet", "small")


class ResNet(nn.Module):
    """A ResNet with torchvision's module names; build it with :func:`resnet`.

    >>> model = resnet(BasicBlock, [1, 1], in_channels=1, base_width=8, stem="small")
    >>> type(model).__name__, [name for name, _ in model.named_children()][:4]
    ('ResNet', ['conv1', 'bn1', 'relu', 'maxpool'])
    """

    def __init__(
        self,
        block: type[nn.Module],
        layers: Sequence[int],
        *,
        num_classes: int = 10,
        in_channels: int = 3,
        base_width: int = 64,
        stem: str = "imagenet",
        identity: IdentityMode = "alias",
        inplace: bool = True,
    ) -> None:
        super().__init__()
        _check_block(block)
        _check_layers(layers)
        for name, value in [("num_classes", num_classes), ("in_channels", in_channels),
                            ("base_width", base_width)]:
            require_int(value, name)
        if stem not in _STEMS:
            raise ValueError(f'stem must be "imagenet" or "small", got {stem!r}')
        self.identity = _check_identity(identity)
        require_bool(inplace, "inplace")
        preact = bool(getattr(block, "preactivation", False))

        imagenet = stem == "imagenet"
        # "small" (digits, CIFAR) keeps the resolution: a 3x3 stride-1 conv, no max-pool.
        self.conv1 = (nn.Conv2d(in_channels, base_width, kernel_size=7, stride=2, padding=3,
                                bias=False) if imagenet else conv3x3(in_channels, base_width))
        # A pre-activation network starts each block with BN+ReLU, so the stem
        # stops at its conv. For ReluFirstBlock this is required, not style: a
        # stem ReLU saves its output for backward, and the block's in-place
        # ReLU on that output would make backward raise.
        self.bn1: nn.Module = nn.Identity() if preact else nn.BatchNorm2d(base_width)
        self.relu: nn.Module = nn.Identity() if preact else nn.ReLU(inplace=inplace)
        self.maxpool: nn.Module = (nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
                                   if imagenet else nn.Identity())

        self.inplanes = base_width
        self.num_stages = len(layers)
        for i, blocks in enumerate(layers):
            stage = self._make_layer(block, base_width * 2**i, blocks, stride=1 if i == 0 else 2,
                                     identity=identity, inplace=inplace)
            setattr(self, f"layer{i + 1}", stage)  # layer1, layer2, ... like torchvision

        # Pre-activation blocks end with a bare sum, so normalise it once at the
        # end. Only these networks get the two extra modules: the others keep
        # exactly torchvision's list of children.
        self.preactivation = preact
        if preact:
            self.final_bn = nn.BatchNorm2d(self.inplanes)
            self.final_relu = nn.ReLU(inplace=inplace)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(self.inplanes, num_classes)
        self._init_weights()

    def _make_layer(self, block: type[nn.Module], planes: int, blocks: int, stride: int,
                    identity: str, inplace: bool) -> nn.Sequential:
        out_planes = planes * block.expansion  # type: ignore[attr-defined]
        downsample = None
        if stride != 1 or self.inplanes != out_planes:
            # A projection shortcut, only where the shape changes.
            downsample = nn.Sequential(conv1x1(self.inplanes, out_planes, stride),
                                       nn.BatchNorm2d(out_planes))
        stage = [block(self.inplanes, planes, stride, downsample,
                       identity=identity, inplace=inplace)]
        self.inplanes = out_planes
        stage += [block(self.inplanes, planes, identity=identity, inplace=inplace)
                  for _ in range(1, blocks)]
        return nn.Sequential(*stage)

    def _init_weights(self) -> None:
        # torchvision's initialisation, so results are comparable with its models.
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        for i in range(1, self.num_stages + 1):
            x = getattr(self, f"layer{i}")(x)
        if self.preactivation:
            x = self.final_relu(self.final_bn(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def _check_block(block: object) -> None:
    ok = (isinstance(block, type) and issubclass(block, nn.Module)
          and isinstance(getattr(block, "expansion", None), int))
    if not ok:
        raise TypeError(
            "block must be a block class such as BasicBlock, Bottleneck, PreActBlock or "
            f"ReluFirstBlock (an nn.Module subclass with an int `expansion`), got {block!r}"
        )


def _check_layers(layers: object) -> None:
    if not isinstance(layers, Sequence) or isinstance(layers, str):
        raise TypeError(f"layers must be a sequence of positive ints, got {layers!r}")
    if len(layers) == 0:
        raise ValueError("layers must be a non-empty sequence of positive ints, got []")
    for n in layers:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            kind = ValueError if isinstance(n, int) and not isinstance(n, bool) else TypeError
            raise kind(f"layers must be a sequence of positive ints, got {list(layers)!r}")


def resnet(
    block: type[nn.Module],
    layers: Sequence[int],
    *,
    num_classes: int = 10,
    in_channels: int = 3,
    base_width: int = 64,
    stem: Literal["imagenet", "small"] = "imagenet",
    identity: IdentityMode = "alias",
    inplace: bool = True,
) -> ResNet:
    """Build a ResNet from a block class and the number of blocks per stage.

    Stage ``i`` has width ``base_width * 2**i`` and stride 2 after the first.
    ``resnet(BasicBlock, [2, 2, 2, 2], num_classes=1000)`` has exactly the
    state_dict keys and shapes of torchvision's ``resnet18``, and
    ``resnet(Bottleneck, [3, 4, 6, 3], num_classes=1000)`` those of ``resnet50``.
    ``stem="small"`` (a 3x3 stride-1 conv, no max-pool) suits 8x8 or 32x32
    images. ``identity`` and ``inplace`` are passed to every block.

    >>> import torch
    >>> model = resnet(BasicBlock, [1, 1, 1], in_channels=1, base_width=16, stem="small")
    >>> model(torch.randn(4, 1, 8, 8)).shape
    torch.Size([4, 10])
    """
    return ResNet(block, layers, num_classes=num_classes, in_channels=in_channels,
                  base_width=base_width, stem=stem, identity=identity, inplace=inplace)
