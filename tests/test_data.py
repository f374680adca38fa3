"""Tests for clonelab.data: the bundled digits as tensors."""

from __future__ import annotations

import pytest
import torch

from clonelab.data import Digits, load_digits_tensors


@pytest.fixture(scope="module")
def digits() -> Digits:
    return load_digits_tensors()


def test_shapes_and_dtypes(digits):
    assert isinstance(digits, Digits)
    assert digits.x_train.shape == (1347, 1, 8, 8)
    assert digits.x_test.shape == (450, 1, 8, 8)  # 25% of 1797, rounded up by scikit-learn
    assert digits.y_train.shape == (1347,) and digits.y_test.shape == (450,)
    assert digits.x_train.dtype == digits.x_test.dtype == torch.float32
    assert digits.y_train.dtype == digits.y_test.dtype == torch.int64


def test_pixel_range_and_labels(digits):
    for x in (digits.x_train, digits.x_test):
        assert x.min() == 0.0 and x.max() == 1.0
        # The raw pixels are integers 0..16, so 16 * x recovers them exactly.
        assert torch.equal(x * 16, (x * 16).round())
    assert set(digits.y_train.tolist()) == set(range(10))
    assert set(digits.y_test.tolist()) == set(range(10))


def test_split_is_stratified(digits):
    train_counts = torch.bincount(digits.y_train, minlength=10).double()
    test_counts = torch.bincount(digits.y_test, minlength=10).double()
    # Every class keeps its share of the whole set, within one image per split.
    total = train_counts + test_counts
    assert torch.all((test_counts - 0.25 * total).abs() <= 1)
    assert torch.all((train_counts / len(digits.y_train) - total / total.sum()).abs() < 0.01)


def test_train_and_test_do_not_overlap(digits):
    train_rows = {tuple(r) for r in digits.x_train.flatten(1).tolist()}
    test_rows = [tuple(r) for r in digits.x_test.flatten(1).tolist()]
    # The 1797 images are all distinct, so no test image may appear in training.
    assert not any(r in train_rows for r in test_rows)


def test_same_seed_same_tensors_other_seed_other_split(digits):
    again = load_digits_tensors()
    assert all(torch.equal(a, b) for a, b in zip(digits, again))
    other = load_digits_tensors(seed=1)
    assert not torch.equal(digits.y_train, other.y_train)


def test_test_size():
    d = load_digits_tensors(test_size=0.1)
    assert len(d.y_test) == 180 and len(d.y_train) == 1617


@pytest.mark.parametrize("kwargs", [{"test_size": 0.0}, {"test_size": 1.0}, {"test_size": "0.2"}, {"seed": -1}])
def test_argument_errors_come_from_scikit_learn_and_name_the_argument(kwargs):
    with pytest.raises(ValueError, match="test_size" if "test_size" in kwargs else "random_state"):
        load_digits_tensors(**kwargs)


def test_positional_arguments_are_refused():
    with pytest.raises(TypeError):
        load_digits_tensors(0.2)  # keyword-only, so a seed cannot be mistaken for a size
