"""Tests for clonelab.training: determinism, alias == clone, learning, errors."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from clonelab.data import Digits, load_digits_tensors
from clonelab.models import BasicBlock, ReluFirstBlock, resnet
from clonelab.training import History, train, weight_distance


@pytest.fixture(scope="module")
def data() -> Digits:
    return load_digits_tensors()


@pytest.fixture(scope="module")
def small_data(data) -> Digits:
    # A quarter of the images: enough to see learning, fast enough for a unit test.
    return Digits(data.x_train[:320], data.y_train[:320], data.x_test[:200], data.y_test[:200])


def _model(**kwargs) -> torch.nn.Module:
    torch.manual_seed(0)
    return resnet(BasicBlock, [1, 1], in_channels=1, base_width=8, stem="small", **kwargs)


def test_history_fields(small_data):
    model = _model()
    h = train(model, small_data, epochs=2, batch_size=64, progress=False)
    assert len(h.step_loss) == 2 * 5  # 320 images / 64 = 5 steps per epoch
    assert len(h.epoch_loss) == len(h.train_acc) == len(h.test_acc) == 2
    assert all(0.0 <= a <= 1.0 for a in h.train_acc + h.test_acc)
    assert h.final_test_acc == h.test_acc[-1]
    assert h.time_s > 0
    assert isinstance(h.peak_bytes, int) and h.peak_bytes > 0
    assert model.training  # left in train mode, as it was found


def test_whole_batches_only_and_the_epoch_loss_is_their_mean(small_data):
    # 320 = 2 * 150 + 20: the 20 left over are skipped (a tiny batch makes batch norm noisy)
    h = train(_model(), small_data, epochs=1, batch_size=150, progress=False)
    assert len(h.step_loss) == 2
    assert math.isclose(h.epoch_loss[0], (h.step_loss[0] + h.step_loss[1]) / 2, rel_tol=1e-12)
    # a batch larger than the data set is one batch of everything
    assert len(train(_model(), small_data, epochs=1, batch_size=1000, progress=False).step_loss) == 1


def test_equal_seeds_and_weights_give_bitwise_equal_runs(small_data):
    model = _model()
    a = train(copy.deepcopy(model), small_data, epochs=1, seed=3, progress=False)
    b = train(copy.deepcopy(model), small_data, epochs=1, seed=3, progress=False)
    c = train(copy.deepcopy(model), small_data, epochs=1, seed=4, progress=False)
    assert a.step_loss == b.step_loss and a.test_acc == b.test_acc
    assert a.step_loss != c.step_loss  # the seed drives the shuffling


def test_train_leaves_the_global_rng_alone(small_data):
    model = _model()  # (this seeds the global RNG itself, so build it first)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    train(model, small_data, epochs=1, progress=False)
    assert torch.equal(torch.rand(3), expected)


def test_alias_and_clone_train_identical_models(small_data):
    alias = _model(identity="alias")
    clone = _model(identity="clone")
    clone.load_state_dict(alias.state_dict())
    a = train(alias, small_data, epochs=1, progress=False)
    c = train(clone, small_data, epochs=1, progress=False)
    assert a.step_loss == c.step_loss
    assert all(torch.equal(p, q) for p, q in zip(alias.parameters(), clone.parameters()))


def test_relu_first_bug_trains_a_different_model(small_data):
    torch.manual_seed(0)
    buggy = resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=8, stem="small")
    fixed = resnet(ReluFirstBlock, [1, 1], in_channels=1, base_width=8, stem="small",
                   identity="clone")
    fixed.load_state_dict(buggy.state_dict())
    a = train(buggy, small_data, epochs=1, progress=False)
    c = train(fixed, small_data, epochs=1, progress=False)
    assert a.step_loss[0] != c.step_loss[0]  # different from the very first forward pass


def test_a_short_run_learns(data):
    torch.manual_seed(0)
    model = resnet(BasicBlock, [1, 1, 1], in_channels=1, base_width=16, stem="small")  # notebook 10's
    h = train(model, data, epochs=2, progress=False)
    assert h.epoch_loss[1] < h.epoch_loss[0]
    assert h.test_acc[1] > h.test_acc[0]
    assert h.final_test_acc > 0.9  # chance is 0.1


def test_progress_bar_goes_to_stdout(small_data, capsys):
    train(_model(), small_data, epochs=1, progress=True)
    out, err = capsys.readouterr()
    assert "test_acc=" in out and "loss=" in out
    assert "test_acc=" not in err
    train(_model(), small_data, epochs=1, progress=False)
    out, err = capsys.readouterr()
    assert out == "" and "test_acc" not in err


def test_threads_are_restored(small_data):
    tiny = Digits(*(t[:32] for t in small_data))
    before = torch.get_num_threads()
    for threads in (1, None):
        train(_model(), tiny, epochs=1, progress=False, threads=threads)
        assert torch.get_num_threads() == before


def test_history_final_test_acc_when_empty():
    assert math.isnan(History().final_test_acc)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"epochs": 0}, ValueError, "epochs must be a positive int"),
    ({"epochs": 1.0}, TypeError, "epochs must be a positive int"),
    ({"batch_size": 0}, ValueError, "batch_size must be a positive int"),
    ({"lr": -1.0}, ValueError, "Invalid learning rate"),               # torch.optim's own check
])
def test_argument_errors(small_data, kwargs, error, match):
    with pytest.raises(error, match=match):
        train(_model(), small_data, **kwargs)


def test_a_model_without_trainable_parameters_is_refused(small_data):
    with pytest.raises(ValueError, match="empty parameter list"):
        train(torch.nn.ReLU(), small_data)


def test_the_measured_first_step_includes_adams_state(small_data):
    # The first step is not like the others: it creates Adam's two buffers per parameter.
    model = _model()
    param_bytes = sum(p.nbytes for p in model.parameters())
    h = train(model, Digits(*(t[:64] for t in small_data)), epochs=1, progress=False)
    assert h.peak_bytes >= 3 * param_bytes  # the grads, and exp_avg and exp_avg_sq


def test_weight_distance_zero_for_equal_models_and_relative_otherwise():
    a, b = _model(), _model()
    assert set(weight_distance(a, b).values()) == {0.0}
    with torch.no_grad():
        b.fc.weight.mul_(-1)                      # b - a = -2a: twice a's norm
    d = weight_distance(a, b)
    assert d["fc.weight"] == pytest.approx(2.0) and d["conv1.weight"] == 0.0
    assert list(d) == [n for n, _ in a.named_parameters()]

