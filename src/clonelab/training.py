"""A short, deterministic training loop for the small ResNets of notebook 10.

Deterministic means: equal ``seed`` and equal starting weights give bitwise
identical losses, run after run. That is what lets the notebook assert that
``identity = x`` and ``identity = x.clone()`` train *exactly* the same model.

>>> import copy, torch
>>> from clonelab.models import BasicBlock, resnet
>>> from clonelab.data import load_digits_tensors
>>> _ = torch.manual_seed(0)
>>> model = resnet(BasicBlock, [1], in_channels=1, base_width=4, stem="small")
>>> data = load_digits_tensors()
>>> a = train(copy.deepcopy(model), data, epochs=1, progress=False)
>>> b = train(copy.deepcopy(model), data, epochs=1, progress=False)
>>> a.step_loss == b.step_loss, len(a.step_loss)
(True, 21)
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from clonelab._checks import require_bool, require_int
from clonelab._util import intra_op_threads

__all__ = ["History", "train", "weight_distance"]



@dataclass
class History:
    """What :func:`train` recorded.

    ``step_loss``: the loss of every optimisation step. ``epoch_loss``: the
    mean training loss of each epoch. ``train_acc``: accuracy on the training
    batches as the model saw them during the epoch (train mode). ``test_acc``:
    accuracy on the test set after each epoch (eval mode). Accuracies are in
    [0, 1]. ``time_s``: wall time of the whole loop. ``peak_bytes``: the peak
    bytes allocated during the first training step (forward, backward and
    optimizer step), from :func:`clonelab.memory.measure`; it includes
    Adam's two state buffers per parameter, which are created on that step.

    >>> h = History(step_loss=[2.3, 1.1], epoch_loss=[1.7], train_acc=[0.5], test_acc=[0.6])
    >>> h.final_test_acc
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


def _check_data(data: object) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    names = ("x_train", "y_train", "x_test", "y_test")
    if not all(hasattr(data, n) for n in names):
        raise TypeError(
            "data must have x_train, y_train, x_test, y_test tensors "
            f"(e.g. load_digits_tensors()), got {type(data).__name__}"
        )
    tensors = tuple(getattr(data, n) for n in names)
    for n, t in zip(names, tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"data.{n} must be a torch.Tensor, got {type(t).__name__}")
    x_train, y_train, x_test, y_test = tensors
    for split, x, y in (("train", x_train, y_train), ("test", x_test, y_test)):
        if not x.is_floating_point() or x.dim() < 2 or len(x) == 0:
            raise ValueError(f"data.x_{split} must be a non-empty float tensor (N, ...), "
                             f"got {x.dtype} of shape {tuple(x.shape)}")
        if y.dtype != torch.int64 or y.dim() != 1 or len(y) != len(x):
            raise ValueError(f"data.y_{split} must be an int64 tensor of shape ({len(x)},), "
                             f"got {y.dtype} of shape {tuple(y.shape)}")
    return x_train, y_train, x_test, y_test


@torch.no_grad()
def _accuracy(model: nn.Module, x: Tensor, y: Tensor, batch_size: int) -> float:
    model.eval()  # BatchNorm uses its running statistics, as at test time
    correct = sum(int((model(x[i:i + batch_size]).argmax(1) == y[i:i + batch_size]).sum())
                  for i in range(0, len(x), batch_size))
    model.train()
    return correct / len(x)


def train(
    model: nn.Module,
    data,
    *,
    epochs: int = 10,
    seed: int = 0,
    batch_size: int = 64,
    lr: float = 3e-3,
    progress: bool = True,
    threads: int | None = 1,
) -> History:
    """Train ``model`` in place (Adam, cosine-decayed rate, cross-entropy) and return its history.

    ``data`` is a :class:`clonelab.data.Digits` (or anything with ``x_train``,
    ``y_train``, ``x_test``, ``y_test`` tensors). The batches are shuffled by
    a ``torch.Generator`` seeded with ``seed``; nothing else is random, and the
    global random state is left alone. The progress bar (one tick per epoch)
    shows the epoch's loss and test accuracy; ``progress=False`` hides it.
    Each epoch uses whole batches only: the images left over after the last
    full batch (a different few each epoch) are skipped.

    ``threads`` is the number of CPU threads each op may use while training
    (restored afterwards; ``None`` keeps torch's setting). One is the default
    because the digits are tiny: a second thread gains little, makes the
    float sums, and so the losses, depend on the machine's core count, and on
    a busy machine (notebooks run in parallel) the threads wait on each
    other and an epoch can take 20 times longer.

    >>> import torch
    >>> from clonelab.models import BasicBlock, resnet
    >>> from clonelab.data import load_digits_tensors
    >>> model = resnet(BasicBlock, [1], in_channels=1, base_width=4, stem="small")
    >>> h = train(model, load_digits_tensors(), epochs=2, progress=False)
    >>> len(h.epoch_loss), 0.0 <= h.final_test_acc <= 1.0
    (2, True)
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    _check_data(data)
    require_int(epochs, "epochs", 1)
    require_int(seed, "seed", 0)
    require_int(batch_size, "batch_size", 1)
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise TypeError(f"lr must be a positive number, got {lr!r}")
    if not 0 < lr < math.inf:  # also rejects NaN
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    require_bool(progress, "progress")
    if threads is not None:
        require_int(threads, "threads", 1)
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError("model must have parameters that require grad")

    with intra_op_threads(threads):
        return _fit(model, data, epochs, seed, batch_size, lr, progress)


def _fit(model: nn.Module, data, epochs: int, seed: int, batch_size: int, lr: float,
         progress: bool) -> History:
    # Imported here: tqdm and the profiler-based memory module are only needed
    # once training starts. Plain tqdm, not tqdm.auto: the latter warns when
    # ipywidgets is missing. file=sys.stdout puts the bar in the cell output.
    from tqdm import tqdm

    from clonelab.memory import measure

    params = [p for p in model.parameters() if p.requires_grad]
    device = params[0].device
    x_train, y_train, x_test, y_test = (t.to(device) for t in
                                        (data.x_train, data.y_train, data.x_test, data.y_test))
    # Adam with a cosine decay to zero: on the digits it passed 97% test
    # accuracy in 3-4 epochs from every seed we tried, where SGD with momentum
    # 0.9 needed 5-10 and a constant rate left the last epochs noisy.
    optimizer = torch.optim.Adam(params, lr=lr)
    # Whole batches only: the short remainder (1347 digits = 21 x 64 + 3) would be a batch of
    # 3 images, whose batch-norm statistics are so noisy that its loss spikes every epoch.
    steps_per_epoch = max(1, len(x_train) // batch_size)
    used = min(len(x_train), steps_per_epoch * batch_size)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * steps_per_epoch)
    generator = torch.Generator().manual_seed(seed)  # our own: the global RNG is not touched
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
            # Measure one step, the first. It is not like the others: it also creates
            # Adam's state (two buffers per parameter), which later steps reuse.
            if epoch == 0 and i == 0 and device.type in ("cpu", "cuda"):
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
        history.test_acc.append(_accuracy(model, x_test, y_test, 512))
        bar.set_postfix(loss=f"{history.epoch_loss[-1]:.3f}", test_acc=f"{history.test_acc[-1]:.3f}")
    bar.close()
    history.time_s = time.perf_counter() - start
    return history


def weight_distance(a: nn.Module, b: nn.Module) -> dict[str, float]:
    """How far apart two models' weights are: for every parameter of ``a``, by name,
    ``‖a − b‖ / ‖a‖`` (relative L2 distance; 0.0 means bitwise equal, 1.0 as far apart as ``a`` is from 0).

    Both models must have the same parameter names and shapes, e.g. two trainings of one architecture.

    >>> import torch
    >>> a, b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    >>> b.load_state_dict(a.state_dict())
    <All keys matched successfully>
    >>> weight_distance(a, b)
    {'weight': 0.0, 'bias': 0.0}
    >>> with torch.no_grad():
    ...     _ = b.weight.mul_(2)
    >>> weight_distance(a, b)["weight"]
    1.0
    """
    for argname, model in (("a", a), ("b", b)):
        if not isinstance(model, nn.Module):
            raise TypeError(f"{argname} must be an nn.Module, got {type(model).__name__}")
    theirs = dict(b.named_parameters())
    distances = {}
    for name, p in a.named_parameters():
        q = theirs.get(name)
        if q is None or q.shape != p.shape:
            raise ValueError(f"b must have a parameter {name!r} of shape {tuple(p.shape)} like a; "
                             f"got {None if q is None else tuple(q.shape)}")
        with torch.no_grad():
            norm = p.double().norm()
            diff = (p.double() - q.double()).norm()
        distances[name] = float(diff / norm) if norm > 0 else float(diff)
    return distances
