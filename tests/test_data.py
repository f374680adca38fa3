"""Tests for clonelab.data: the bundled digits as tensors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from clonelab.data import Digits, digits_arrays, load_digits_tensors


@pytest.fixture(scope="module")
def digits() -> Digits:
    return load_digits_tensors()


def test_shapes_and_dtypes(digits):
    assert isinstance(digits, Digits)
    assert digits.x_train.shape == (1347, 1, 8, 8)
    assert digits.x_test.shape == (450, 1, 8, 8)  # 25% of 1797, rounded up
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


def test_an_int_test_size_is_a_count_of_images():
    d = load_digits_tensors(test_size=100)
    assert len(d.y_test) == 100 and len(d.y_train) == 1697
    assert torch.all(torch.bincount(d.y_test, minlength=10) >= 9)   # still stratified: 10 classes of about 180


@pytest.mark.parametrize("kwargs, name", [({"test_size": 0.0}, "test_size"), ({"test_size": 1.0}, "test_size"),
                                          ({"test_size": "0.2"}, "test_size"), ({"test_size": 5}, "test_size"),
                                          ({"test_size": True}, "test_size"), ({"seed": -1}, "seed"),
                                          ({"test_size": 0.999}, "test_size"), ({"test_size": 0.001}, "test_size"),
                                          ({"seed": 1.5}, "seed")])
def test_bad_arguments_get_an_error_that_names_them(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        load_digits_tensors(**kwargs)


def test_the_digits_file_is_read_as_scikit_learn_reads_it():
    from sklearn.datasets import load_digits

    images, labels = digits_arrays()
    expected_images, expected_labels = load_digits(return_X_y=True)
    assert np.array_equal(images, expected_images) and images.dtype == expected_images.dtype
    assert np.array_equal(labels, expected_labels)


def test_without_the_file_the_digits_come_from_scikit_learns_loader(monkeypatch):
    import importlib.util

    import sklearn.datasets

    real = importlib.util.find_spec
    # "email" has no datasets/data/digits.csv.gz, as an install of scikit-learn laid out differently would not
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: real("email") if name == "sklearn" else real(name, *a))
    monkeypatch.setattr(sklearn.datasets, "load_digits", lambda return_X_y: ("from the loader", return_X_y))
    assert digits_arrays() == ("from the loader", True)


def test_loading_does_not_import_scikit_learn():
    import subprocess
    import sys

    code = "import sys; from clonelab.data import load_digits_tensors; load_digits_tensors(); print('sklearn' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_positional_arguments_are_refused():
    with pytest.raises(TypeError):
        load_digits_tensors(0.2)  # keyword-only, so a seed cannot be mistaken for a size
