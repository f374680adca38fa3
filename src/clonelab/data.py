"""Real data that needs no download (notebook 10): the handwritten digits (1797 images of 8x8 pixels, 10
classes) that ship inside scikit-learn, as tensors."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor


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


def load_digits_tensors(*, test_size: float = 0.25, seed: int = 0) -> Digits:
    """Load scikit-learn's bundled digits and split them, stratified, into train and test tensors.

    ``test_size`` is the fraction kept for testing; equal ``seed`` give identical tensors.
    As in scikit-learn's ``train_test_split``, an int ``test_size`` is a count of test images; scikit-learn raises
    ValueError for a float outside (0, 1), a count it cannot split or a negative ``seed``.

    >>> d = load_digits_tensors(test_size=0.2, seed=1)
    >>> len(d.y_test), float(d.x_train.max()), d.y_train.unique().tolist()
    (360, 1.0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """
    from sklearn.datasets import load_digits  # here, so that `import clonelab` does not pay for it
    from sklearn.model_selection import train_test_split

    images, labels = load_digits(return_X_y=True)  # (1797, 64) float64 of ink counts 0..16, (1797,) int
    x_train, x_test, y_train, y_test = train_test_split(images, labels, test_size=test_size, stratify=labels,
                                                        random_state=seed)
    # float32 is what nn layers expect, the channel axis makes them conv-ready; cross_entropy wants int64
    images = [torch.as_tensor(a, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16.0 for a in (x_train, x_test)]
    labels = [torch.as_tensor(a, dtype=torch.int64) for a in (y_train, y_test)]
    return Digits(images[0], labels[0], images[1], labels[1])
