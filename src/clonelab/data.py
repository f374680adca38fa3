"""Real data that needs no download: scikit-learn's handwritten digits, as tensors.

The digits set (1797 images of 8x8 pixels, 10 classes) ships inside
scikit-learn, so the training notebook runs offline, on Colab and in CI alike.

>>> d = load_digits_tensors()
>>> d.x_train.shape, d.x_test.shape
(torch.Size([1347, 1, 8, 8]), torch.Size([450, 1, 8, 8]))
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["Digits", "load_digits_tensors"]

# The images store ink as integers 0..16 (4x4 blocks of 32x32 bitmaps, counted).
_MAX_PIXEL = 16.0


class Digits(NamedTuple):
    """A train/test split: float32 images (N, 1, 8, 8) in [0, 1] and int64 labels 0..9.

    A NamedTuple, so it unpacks: ``x_train, y_train, x_test, y_test = digits``.

    >>> x_train, y_train, x_test, y_test = load_digits_tensors()
    >>> x_train.dtype, y_train.dtype
    (torch.float32, torch.int64)
    """

    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor


def load_digits_tensors(*, test_size: float = 0.25, seed: int = 0) -> Digits:
    """Load scikit-learn's bundled digits and split them into train and test tensors.

    The split is stratified, so both parts hold the ten classes in the same
    proportions, and it depends only on ``seed``: equal seeds give identical
    tensors. ``test_size`` is the fraction of the 1797 images kept for testing.

    >>> d = load_digits_tensors(test_size=0.2, seed=1)
    >>> len(d.y_test), float(d.x_train.max()), d.y_train.unique().tolist()
    (360, 1.0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """
    if isinstance(test_size, bool) or not isinstance(test_size, (int, float)):
        raise TypeError(f"test_size must be a float between 0 and 1, got {test_size!r}")
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be a float between 0 and 1 (exclusive), got {test_size!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be a non-negative int, got {seed!r}")
    if seed < 0:  # scikit-learn's random_state rejects negative seeds
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")

    # Imported here so that `import clonelab` does not pay for scikit-learn.
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    images, labels = load_digits(return_X_y=True)  # (1797, 64) float64, (1797,) int
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=test_size, stratify=labels, random_state=seed
    )

    def to_images(a) -> Tensor:
        # float32 is what nn layers expect; the channel axis makes it conv-ready.
        return torch.as_tensor(a, dtype=torch.float32).reshape(-1, 1, 8, 8) / _MAX_PIXEL

    def to_labels(a) -> Tensor:
        return torch.as_tensor(a, dtype=torch.int64)  # cross_entropy wants int64 targets

    return Digits(to_images(x_train), to_labels(y_train), to_images(x_test), to_labels(y_test))
