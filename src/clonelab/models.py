"""Models for notebooks 06 and 08-11: the blog post's toy residual, ResNet blocks, and :func:`resnet`. Every
block keeps torchvision's module and parameter names, so a torchvision ``state_dict`` loads into it unchanged."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from clonelab._checks import require_bool, require_int


def _check_identity(identity_mode: object, argname: str = "identity") -> str:
    if identity_mode not in ("alias", "clone"):
        raise ValueError(f'{argname} must be "alias" or "clone", got {identity_mode!r}')
    return identity_mode


def take_identity(x: Tensor, identity_mode: str) -> Tensor:
    """The tensor a block keeps for its shortcut: ``x`` itself for "alias", a copy for "clone".

    >>> x = torch.ones(2)
    >>> take_identity(x, "alias") is x, take_identity(x, "clone") is x
    (True, False)
    """
    _check_identity(identity_mode, "identity_mode")
    # the question of the series: "alias" names x again (no op, no memory); "clone" is storage x's writes cannot reach
    return x if identity_mode == "alias" else x.clone()


@dataclass
class ToyResidual:
    """Every tensor of the toy residual model, under the blog post's names (notebook 08)."""

    input_data: Tensor
    weight1: Tensor
    weight2: Tensor
    target_data: Tensor
    feature: Tensor
    identity: Tensor
    feature2: Tensor
    output_data: Tensor
    loss: Tensor


def toy_residual(identity: str = "alias", *, backward: bool = True) -> ToyResidual:
    """Run the blog post's one-number residual model and return all its tensors (notebook 08).

    >>> r = toy_residual("clone")
    >>> r.output_data.item(), r.loss.item(), r.weight1.grad.item(), r.weight2.grad.item()
    (8.0, 0.25, -4.0, -2.0)
    >>> alias = toy_residual("alias"); alias.identity is alias.feature, r.identity is r.feature
    (True, False)
    """
    identity_mode = _check_identity(identity)
    input_data = torch.tensor([1.0])
    weight1 = torch.tensor([2.0], requires_grad=True)
    weight2 = torch.tensor([3.0], requires_grad=True)
    target_data = torch.tensor([8.5])

    feature = weight1 * input_data
    identity_t = take_identity(feature, identity_mode)
    feature2 = weight2 * feature
    output_data = identity_t + feature2
    loss = (output_data - target_data) ** 2
    if backward:
        loss.backward()
    return ToyResidual(input_data, weight1, weight2, target_data, feature, identity_t, feature2, output_data, loss)


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1) -> nn.Conv2d:
    """A 3x3 convolution with padding 1 and no bias (the BatchNorm after it has one)."""
    return nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=1, groups=groups, bias=False)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """A 1x1 convolution with no bias, used to change channels or to downsample.

    >>> conv1x1(8, 16)
    Conv2d(8, 16, kernel_size=(1, 1), stride=(1, 1), bias=False)
    """
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class _ResidualBlock(nn.Module):
    """What the blocks share. ``identity_mode``, "alias" or "clone", is read on every forward call, so it can be
    switched on a built block. Each block registers ``downsample`` last, for torchvision's order of state_dict keys."""

    expansion = 1
    preactivation = False  # resnet() reads it: True ends the stem at its conv and adds a final BN+ReLU
    # What the downsample reads: "x", torchvision's line (a clone is then freed inside the block), or "identity",
    # the post's second code (the shortcut conv saves the clone until backward). Notebook 09.
    shortcut_input = "x"

    def __init__(self, inplanes: int, planes: int, stride: int, identity: str, inplace: bool) -> None:
        super().__init__()
        for value, name in ((inplanes, "inplanes"), (planes, "planes"), (stride, "stride")):
            require_int(value, name)
        require_bool(inplace, "inplace")
        self.identity_mode, self.stride = _check_identity(identity), stride

    def extra_repr(self) -> str:
        return f"identity={self.identity_mode!r}"


class BasicBlock(_ResidualBlock):
    """torchvision's two-conv ResNet block (He et al. 2015), line for line, with ``identity="alias"`` (torchvision's
    ``identity = x``) or ``"clone"`` (``x.clone()``); ValueError for any other mode. Notebook 09.

    >>> block = BasicBlock(8, 8)
    >>> x = torch.randn(2, 8, 4, 4)
    >>> block(x).shape, x._version
    (torch.Size([2, 8, 4, 4]), 0)
    """

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 *, identity: str = "alias", inplace: bool = True) -> None:
        super().__init__(inplanes, planes, stride, identity, inplace)
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=inplace)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x: Tensor) -> Tensor:
        identity = take_identity(x, self.identity_mode)  # torchvision: identity = x

        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:  # torchvision: self.downsample(x); the second code: (identity)
            identity = self.downsample(x if self.shortcut_input == "x" else identity)

        out += identity  # in place, into bn2's output: BN's backward does not need it
        return self.relu(out)  # in place, into the sum: add's backward saves nothing


class Bottleneck(_ResidualBlock):
    """The 1x1-3x3-1x1 ResNet block, stride on the 3x3 conv (torchvision's "v1.5"); see BasicBlock. Inner
    width ``int(planes * base_width / 64) * groups``, ``planes * 4`` output channels.

    >>> Bottleneck(16, 4)(torch.randn(2, 16, 4, 4)).shape
    torch.Size([2, 16, 4, 4])
    """

    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 groups: int = 1, base_width: int = 64, *, identity: str = "alias", inplace: bool = True) -> None:
        super().__init__(inplanes, planes, stride, identity, inplace)
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = conv3x3(width, width, stride, groups)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=inplace)
        self.downsample = downsample

    def forward(self, x: Tensor) -> Tensor:
        identity = take_identity(x, self.identity_mode)

        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x if self.shortcut_input == "x" else identity)

        out += identity
        return self.relu(out)


class _SecondCode:
    """The two identity lines of the post's second code: ``identity = x.clone()`` (the default), then the shortcut
    reads ``identity``, whose clone its convolution saves until backward."""

    shortcut_input = "identity"

    def __init__(self, *args, identity: str = "clone", **kwargs) -> None:
        super().__init__(*args, identity=identity, **kwargs)


class SecondCodeBlock(_SecondCode, BasicBlock):
    """The post's second code (JayPatwardhan/ResNet-PyTorch, ``ResNet/ResNet.py``, class ``Block``, lines 58 and 64)
    on torchvision's layers. ``identity="alias"`` keeps the shortcut line with ``identity = x``.

    >>> SecondCodeBlock(8, 8).identity_mode
    'clone'
    """


class SecondCodeBottleneck(_SecondCode, Bottleneck):
    """The post's second code's two identity lines (class ``Bottleneck``, lines 25 and 35) on torchvision's
    Bottleneck; see SecondCodeBlock.

    >>> SecondCodeBottleneck(16, 4).shortcut_input
    'identity'
    """


class PreActBlock(_ResidualBlock):
    """The pre-activation block of He et al. 2016: BN and ReLU before each conv, nothing after the sum. It only
    reads ``x``, so the alias is safe; a ``downsample`` reads the pre-activated tensor, as in the paper.

    >>> PreActBlock(8, 8)(torch.randn(2, 8, 4, 4)).shape
    torch.Size([2, 8, 4, 4])
    """

    preactivation = True

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 *, identity: str = "alias", inplace: bool = True) -> None:
        super().__init__(inplanes, planes, stride, identity, inplace)
        self.bn1 = nn.BatchNorm2d(inplanes)
        self.relu = nn.ReLU(inplace=inplace)
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.downsample = downsample

    def forward(self, x: Tensor) -> Tensor:
        out = self.relu(self.bn1(x))
        shortcut = take_identity(x, self.identity_mode) if self.downsample is None else self.downsample(out)
        out = self.conv2(self.relu(self.bn2(self.conv1(out))))
        out += shortcut  # into conv2's output, which conv's backward does not need
        return out


class ReluFirstBlock(_ResidualBlock):
    """A block whose branch starts with ``nn.ReLU(inplace=True)`` on ``x`` itself, a bug from real code
    (rosinality/vq-vae-2-pytorch, issue 60): with the defaults it computes ``relu(x) + F(relu(x))``, not
    ``x + F(relu(x))``, and overwrites the caller's ``x``. Notebooks 09 and 10.

    >>> x = torch.randn(2, 4, 4, 4)
    >>> _ = ReluFirstBlock(4, 4)(x)  # the default: identity="alias", inplace=True
    >>> x._version > 0, bool((x >= 0).all())
    (True, True)
    """

    preactivation = True

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 *, identity: str = "alias", inplace: bool = True) -> None:
        super().__init__(inplanes, planes, stride, identity, inplace)
        self.relu = nn.ReLU(inplace=inplace)
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x: Tensor) -> Tensor:
        identity = take_identity(x, self.identity_mode)

        out = self.relu(x)  # the bug: with inplace=True this overwrites x, and an alias with it
        out = self.relu(self.bn1(self.conv1(out)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(identity)

        out += identity
        return out


class ResNet(nn.Module):
    """What :func:`resnet` builds: torchvision's children, ``conv1`` to ``fc``, run in that order.

    >>> model = resnet(BasicBlock, [1, 1], in_channels=1, base_width=8, stem="small")
    >>> [name for name, _ in model.named_children()][:5]
    ['conv1', 'bn1', 'relu', 'maxpool', 'layer1']
    """

    def forward(self, x: Tensor) -> Tensor:
        *body, fc = self.children()  # conv1 bn1 relu maxpool layer1 ... [final_bn final_relu] avgpool
        for module in body:
            x = module(x)
        return fc(torch.flatten(x, 1))


def resnet(block: type[_ResidualBlock], layers: list[int], *, num_classes: int = 10, in_channels: int = 3,
           base_width: int = 64, stem: str = "imagenet", identity: str | None = None, inplace: bool = True) -> ResNet:
    """Build a ResNet from a block class and the number of blocks per stage (notebooks 09, 10).

    Stage ``i`` has width ``base_width * 2**i``, stride 2 after the first; with ``num_classes=1000``, BasicBlocks
    ``[2, 2, 2, 2]`` have the state_dict of torchvision's ``resnet18``, Bottlenecks ``[3, 4, 6, 3]`` that of
    ``resnet50``. ``stem="small"`` (a 3x3 conv, no max-pool) suits 8x8 or 32x32 images. ``identity`` (None: the
    block's default) and ``inplace`` go to every block. Errors name the argument that is wrong.

    >>> model = resnet(BasicBlock, [1, 1, 1], in_channels=1, base_width=16, stem="small")
    >>> model(torch.randn(4, 1, 8, 8)).shape
    torch.Size([4, 10])
    """
    if not (isinstance(block, type) and issubclass(block, _ResidualBlock)):
        raise TypeError(f"block must be a block class such as BasicBlock or Bottleneck, got {block!r}")
    if (not isinstance(layers, (list, tuple)) or not layers
            or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in layers)):
        raise ValueError(f"layers must be a non-empty list of positive ints, got {layers!r}")
    if stem not in ("imagenet", "small"):
        raise ValueError(f'stem must be "imagenet" or "small", got {stem!r}')
    if identity is not None:
        _check_identity(identity)
    for value, name in ((num_classes, "num_classes"), (in_channels, "in_channels"), (base_width, "base_width")):
        require_int(value, name)
    model, preact = ResNet(), block.preactivation
    model.conv1 = (nn.Conv2d(in_channels, base_width, kernel_size=7, stride=2, padding=3, bias=False)
                   if stem == "imagenet" else conv3x3(in_channels, base_width))
    # A pre-activation network starts each block with BN+ReLU, so the stem stops at its conv; ReluFirstBlock
    # needs this: its in-place ReLU on a stem ReLU's saved output would make backward raise.
    model.bn1 = nn.Identity() if preact else nn.BatchNorm2d(base_width)
    model.relu = nn.Identity() if preact else nn.ReLU(inplace=inplace)
    model.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1) if stem == "imagenet" else nn.Identity()
    inplanes = base_width
    for i, blocks in enumerate(layers):
        planes, stride = base_width * 2**i, 1 if i == 0 else 2
        out_planes = planes * block.expansion
        downsample = (nn.Sequential(conv1x1(inplanes, out_planes, stride), nn.BatchNorm2d(out_planes))
                      if stride != 1 or inplanes != out_planes else None)  # a projection, only where the shape changes
        chosen = {"identity": identity} if identity is not None else {}   # else the block's own default
        stage = [block(inplanes, planes, stride, downsample, **chosen, inplace=inplace)]
        stage += [block(out_planes, planes, **chosen, inplace=inplace) for _ in range(1, blocks)]
        setattr(model, f"layer{i + 1}", nn.Sequential(*stage))  # layer1, layer2, ... like torchvision
        inplanes = out_planes
    if preact:  # the blocks end with a bare sum: normalise it once, before pooling
        model.final_bn = nn.BatchNorm2d(inplanes)
        model.final_relu = nn.ReLU(inplace=inplace)
    model.avgpool = nn.AdaptiveAvgPool2d((1, 1))
    model.fc = nn.Linear(inplanes, num_classes)
    for m in model.modules():  # torchvision's initialisation, so results compare with its models
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
    return model

