"""Real data that needs no download (notebook 10): the handwritten digits (1797 images of 8x8 pixels, 10
classes) that ship inside scikit-learn, as tensors."""

from __future__ import annotations

import gzip
import importlib.util
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from clonelab._checks import require_int


class Digits(NamedTuple):
    """A train/test split: float32 images (N, 1, 8, 8) in [0, 1] and int64 labels 0..9; it unpacks.

    >>> x_train, y_train, x_test, y_test = load_digits_tensors()
    >>> x_train.shape, y_train.dtype, x_test.shape
    (torch.Size([1347, 1, 8, 8]), torch.int64, torch.Size([450, 1, 8, 8]))
    """

    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor


def digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits as ``load_digits(return_X_y=True)`` gives them, (1797, 64) ink counts 0..16 and (1797,)
    labels, read from the file it ships (``import sklearn`` is slow), else through ``sklearn.datasets.load_digits``."""
    spec = importlib.util.find_spec("sklearn")
    path = Path(spec.submodule_search_locations[0], "datasets", "data", "digits.csv.gz") if spec else None
    if path is None or not path.is_file():
        from sklearn.datasets import load_digits  # raises ImportError when scikit-learn is missing
        return load_digits(return_X_y=True)
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",")
    return table[:, :-1], table[:, -1].astype(int)


def load_digits_tensors(*, test_size: float | int = 0.25, seed: int = 0) -> Digits:
    """The digits, split into train and test tensors, stratified: each class keeps its share in both.

    ``test_size``: a fraction in (0, 1), rounded up, or a count of test images; ``seed`` seeds the split's generator.

    >>> d = load_digits_tensors(test_size=0.2, seed=1)
    >>> len(d.y_test), float(d.x_train.max()), d.y_train.unique().tolist()
    (360, 1.0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """
    images, labels = (torch.as_tensor(a) for a in digits_arrays())
    n = len(labels)
    n_test = math.ceil(test_size * n) if isinstance(test_size, float) and 0 < test_size < 1 else test_size
    if isinstance(n_test, bool) or not isinstance(n_test, int) or not 10 <= n_test <= n - 10:
        raise ValueError(f"test_size must be a fraction in (0, 1) or a count, giving 10 to {n - 10} test images "
                         f"(one of each class on both sides), got {test_size!r}")
    generator = torch.Generator().manual_seed(require_int(seed, "seed", minimum=0))
    classes = [torch.nonzero(labels == c).flatten() for c in range(10)]
    share = [len(idx) * n_test / n for idx in classes]  # each class's share of the test images: the floors,
    counts = [math.floor(s) for s in share]               # then one more for the largest remainders
    for c in sorted(range(10), key=lambda c: counts[c] - share[c])[:n_test - sum(counts)]:
        counts[c] += 1
    shuffled = [idx[torch.randperm(len(idx), generator=generator)] for idx in classes]
    test = torch.cat([idx[:k] for idx, k in zip(shuffled, counts)])
    train = torch.cat([idx[k:] for idx, k in zip(shuffled, counts)])
    test, train = (t[torch.randperm(len(t), generator=generator)] for t in (test, train))  # not sorted by class
    # float32 is what nn layers expect, the channel axis makes them conv-ready; cross_entropy wants int64
    x = images.to(torch.float32).reshape(-1, 1, 8, 8) / 16.0
    return Digits(x[train], labels[train].long(), x[test], labels[test].long())
