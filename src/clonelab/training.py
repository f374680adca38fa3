"""A short, deterministic training loop for the small ResNets of notebook 10: equal ``seed`` and equal
starting weights give bitwise identical losses, run after run."""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from clonelab._checks import require_int
from clonelab._util import intra_op_threads
from clonelab.memory import measure


@dataclass
class History:
    """What :func:`train` recorded: the loss of every step (``step_loss``); per epoch, the mean loss (``epoch_loss``),
    the accuracy in [0, 1] on the training batches in train mode (``train_acc``) and on the test set in eval mode
    (``test_acc``); the wall time (``time_s``); ``peak_bytes``, the :func:`clonelab.measure` peak of the first step.

    >>> History(test_acc=[0.5, 0.6]).final_test_acc
    0.6
    """

    step_loss: list[float] = field(default_factory=list)
    epoch_loss: list[float] = field(default_factory=list)
    train_acc: list[float] = field(default_factory=list)
    test_acc: list[float] = field(default_factory=list)
    time_s: float = 0.0
    peak_bytes: int | None = None

    @property
    def final_test_acc(self) -> float:
        """Test accuracy after the last epoch (NaN if no epoch ran)."""
        return self.test_acc[-1] if self.test_acc else math.nan


@torch.no_grad()
def _accuracy(model: nn.Module, x: Tensor, y: Tensor, batch_size: int = 512) -> float:
    model.eval()  # BatchNorm uses its running statistics, as at test time
    correct = sum(int((model(x[i:i + batch_size]).argmax(1) == y[i:i + batch_size]).sum())
                  for i in range(0, len(x), batch_size))
    model.train()
    return correct / len(x)


def train(model: nn.Module, data, *, epochs: int = 10, seed: int = 0, batch_size: int = 64, lr: float = 3e-3,
          progress: bool = True, threads: int | None = 1) -> History:
    """Train ``model`` in place (Adam, cosine-decayed rate, cross-entropy) and return its :class:`History`.

    ``data`` has ``x_train``, ``y_train``, ``x_test``, ``y_test`` (:func:`clonelab.load_digits_tensors`). Whole
    batches only, shuffled by a generator seeded with ``seed``; ``progress`` shows a bar; ``threads``: torch's
    intra-op CPU threads while training (None: as it is; one keeps the losses independent of the core count).

    >>> from clonelab import BasicBlock, load_digits_tensors, resnet
    >>> model = resnet(BasicBlock, [1], in_channels=1, base_width=4, stem="small")
    >>> h = train(model, load_digits_tensors(), epochs=2, progress=False)
    >>> len(h.epoch_loss), len(h.step_loss), 0.0 <= h.final_test_acc <= 1.0
    (2, 42, True)
    """
    require_int(epochs, "epochs")
    require_int(batch_size, "batch_size")
    with intra_op_threads(threads):
        return _fit(model, data, epochs, seed, batch_size, lr, progress)


def _fit(model: nn.Module, data, epochs: int, seed: int, batch_size: int, lr: float, progress: bool) -> History:
    from tqdm import tqdm  # not tqdm.auto, which warns when ipywidgets is missing
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    device = optimizer.param_groups[0]["params"][0].device
    x_train, y_train, x_test, y_test = (t.to(device) for t in (data.x_train, data.y_train, data.x_test, data.y_test))
    # Whole batches only: a remainder of 3 images (1347 = 21 x 64 + 3) has noisy batch-norm statistics
    steps = max(1, len(x_train) // batch_size)
    used = min(len(x_train), steps * batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * steps)
    generator = torch.Generator().manual_seed(seed)
    history = History()

    def step(xb: Tensor, yb: Tensor) -> tuple[Tensor, Tensor]:
        optimizer.zero_grad(set_to_none=True)
        logits = model(xb)
        loss = F.cross_entropy(logits, yb)
        loss.backward()
        optimizer.step()
        schedule.step()
        return logits.detach(), loss.detach()

    model.train()
    start = time.perf_counter()
    bar = tqdm(range(epochs), desc="training", unit="epoch", file=sys.stdout, disable=not progress)
    for epoch in bar:
        order = torch.randperm(len(x_train), generator=generator).to(device)
        loss_sum, correct = 0.0, 0
        for i in range(0, used, batch_size):
            idx = order[i:i + batch_size]
            xb, yb = x_train[idx], y_train[idx]
            if epoch == 0 and i == 0 and device.type in ("cpu", "cuda"):  # the first step also creates Adam's state
                with measure(device.type) as mem:
                    logits, loss = step(xb, yb)
                history.peak_bytes = mem.peak
            else:
                logits, loss = step(xb, yb)
            history.step_loss.append(loss.item())
            loss_sum += loss.item() * len(idx)
            correct += int((logits.argmax(1) == yb).sum())
        history.epoch_loss.append(loss_sum / used)
        history.train_acc.append(correct / used)
        history.test_acc.append(_accuracy(model, x_test, y_test))
        bar.set_postfix(loss=f"{history.epoch_loss[-1]:.3f}", test_acc=f"{history.test_acc[-1]:.3f}")
    bar.close()
    history.time_s = time.perf_counter() - start
    return history


def weight_distance(a: nn.Module, b: nn.Module) -> dict[str, float]:
    """For every parameter of ``a``, by name: ``‖a − b‖ / ‖a‖`` (0.0: bitwise equal; 1.0: as far apart
    as ``a`` is from 0).

    >>> a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1); _ = b.load_state_dict(a.state_dict())
    >>> weight_distance(a, b)
    {'weight': 0.0, 'bias': 0.0}
    >>> with torch.no_grad():
    ...     _ = b.weight.mul_(2)
    >>> weight_distance(a, b)["weight"]
    1.0
    """
    theirs = dict(b.named_parameters())
    distances = {}
    for name, p in a.named_parameters():
        with torch.no_grad():
            norm, diff = p.double().norm(), (p.double() - theirs[name].double()).norm()
        distances[name] = float(diff / norm) if norm > 0 else float(diff)
    return distances
