"""one_hot, binary cross-entropy (probabilities and logits), cross_entropy's
ignore_index / label_smoothing / weight options, Embedding's padding_idx and
Dropout, against torch: one lambda per case, a random cotangent, explicit
tolerances; gradcheck in float64 where differentiable."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.autodiff import nn
from chapters.torchcheck import assert_close

from .parity import FLOAT64, check_both

rng = np.random.default_rng(7)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def probabilities(*shape, dtype=np.float32):
    return rng.uniform(0.05, 0.95, shape).astype(dtype)


def classes(*shape, high=5):
    return rng.integers(0, high, size=shape).astype(np.int64)


CLASS_WEIGHT = np.array([0.5, 2.0, 1.0, 0.25, 3.0], np.float32)
TARGET_WITH_IGNORED = np.array([0, 3, -100, 1, 4, -100])
SOFT_TARGET = np.abs(normal(6, 5)) / np.abs(normal(6, 5)).sum(1, keepdims=True)

CASES = {
    "bce_mean": (lambda lib, F, x, t: F.binary_cross_entropy(x, t),
                 [probabilities(4, 3), probabilities(4, 3)], None),
    "bce_sum_weighted": (lambda lib, F, x, t, w: F.binary_cross_entropy(x, t, weight=w,
                                                                        reduction="sum"),
                         [probabilities(4, 3), probabilities(4, 3), normal(3)],
                         [True, True, False]),
    "bce_none_0d": (lambda lib, F, x, t: F.binary_cross_entropy(x, t, reduction="none"),
                    [probabilities(), probabilities()], None),
    "bce_logits_mean": (lambda lib, F, x, t: F.binary_cross_entropy_with_logits(x, t),
                        [normal(4, 3) * 3, probabilities(4, 3)], None),
    "bce_logits_extreme": (lambda lib, F, x, t: F.binary_cross_entropy_with_logits(
        x, t, reduction="none"), [np.array([-200.0, -30.0, 0.0, 30.0, 200.0], np.float32),
                                  np.array([1.0, 0.0, 0.5, 1.0, 0.0], np.float32)], None),
    "bce_logits_pos_weight": (lambda lib, F, x, t, p, w: F.binary_cross_entropy_with_logits(
        x, t, weight=w, pos_weight=p, reduction="sum"),
        [normal(4, 3), probabilities(4, 3), np.abs(normal(3)) + 0.5, normal(4, 1)],
        [True, True, False, False]),
    "cross_entropy_ignore_index": (lambda lib, F, x, t: F.cross_entropy(x, t),
                                   [normal(6, 5), TARGET_WITH_IGNORED], None),
    "cross_entropy_smoothing": (lambda lib, F, x, t: F.cross_entropy(x, t, label_smoothing=0.2),
                                [normal(6, 5), TARGET_WITH_IGNORED], None),
    "cross_entropy_smoothing_weight": (lambda lib, F, x, t, w: F.cross_entropy(
        x, t, weight=w, label_smoothing=0.3), [normal(6, 5), TARGET_WITH_IGNORED, CLASS_WEIGHT],
        [True, False, False]),
    "cross_entropy_smoothing_weight_sum": (lambda lib, F, x, t, w: F.cross_entropy(
        x, t, weight=w, label_smoothing=0.3, reduction="sum"),
        [normal(6, 5), TARGET_WITH_IGNORED, CLASS_WEIGHT], [True, False, False]),
    "cross_entropy_smoothing_none_spatial": (lambda lib, F, x, t: F.cross_entropy(
        x, t, label_smoothing=0.1, ignore_index=2, reduction="none"),
        [normal(2, 5, 3), classes(2, 3)], None),
    "cross_entropy_soft_weight_smoothing": (lambda lib, F, x, t, w: F.cross_entropy(
        x, t, weight=w, label_smoothing=0.1), [normal(6, 5), SOFT_TARGET, CLASS_WEIGHT],
        [True, False, False]),
    "CrossEntropyLoss_module": (lambda lib, F, x, t, w: lib.nn.CrossEntropyLoss(
        weight=w, ignore_index=1, label_smoothing=0.05)(x, t),
        [normal(6, 5), classes(6), CLASS_WEIGHT], [True, False, False]),
    "BCEWithLogitsLoss_module": (lambda lib, F, x, t, p: lib.nn.BCEWithLogitsLoss(
        pos_weight=p)(x, t), [normal(5, 2), probabilities(5, 2), np.array([2.0, 0.5],
                                                                          np.float32)],
        [True, False, False]),
    "BCELoss_module": (lambda lib, F, x, t: lib.nn.BCELoss(reduction="sum")(x, t),
                       [probabilities(5), probabilities(5)], None),
    "embedding_padding_idx": (lambda lib, F, w, i: F.embedding(i, w, padding_idx=2),
                              [normal(5, 3), np.array([[0, 2, 4], [2, 2, 1]])], None),
    "embedding_negative_padding_idx": (lambda lib, F, w, i: F.embedding(i, w, padding_idx=-1),
                                       [normal(5, 3), np.array([4, 0, 4])], None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, arrays, grad_mask = CASES[name]
    check_both(fn, arrays, grad_mask=grad_mask)


@pytest.mark.parametrize("name", ["bce_mean", "bce_logits_pos_weight",
                                  "cross_entropy_smoothing_weight"])
def test_float64_matches_torch(name):
    fn, arrays, grad_mask = CASES[name]
    arrays = [a.astype(np.float64) if a.dtype == np.float32 else a for a in arrays]
    check_both(fn, arrays, FLOAT64, grad_mask=grad_mask)


P64 = ad.tensor(probabilities(3, 2, dtype=np.float64))

GRADCHECKS = {
    "bce": (lambda x: F.binary_cross_entropy(x, P64), probabilities(3, 2, dtype=np.float64)),
    "bce_logits": (lambda x: F.binary_cross_entropy_with_logits(
        x, P64, pos_weight=ad.tensor(np.array([3.0, 0.5]))), normal(3, 2, dtype=np.float64)),
    "cross_entropy_smoothing_weight": (lambda x: F.cross_entropy(
        x, ad.tensor(TARGET_WITH_IGNORED), label_smoothing=0.2,
        weight=ad.tensor(CLASS_WEIGHT.astype(np.float64))), normal(6, 5, dtype=np.float64)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, x = GRADCHECKS[name]
    assert ad.gradcheck(fn, (ad.tensor(x, requires_grad=True),))


def test_bce_with_logits_gradient_is_sigmoid_minus_target():
    """The independent closed form: d/dx mean(loss) = (sigmoid(x) - t) / n."""
    x = normal(8) * 4
    t = probabilities(8)
    xe = ad.tensor(x, requires_grad=True)
    F.binary_cross_entropy_with_logits(xe, ad.tensor(t)).backward()
    np.testing.assert_allclose(xe.grad.data, (1 / (1 + np.exp(-x)) - t) / 8, rtol=1e-5,
                               atol=1e-7)


@pytest.mark.parametrize("logits", ["float16", "float32", "float64"])
@pytest.mark.parametrize("target", ["float16", "bfloat16", "float32", "float64"])
def test_bce_with_logits_loss_has_the_targets_dtype_as_torchs(logits, target):
    x, t = normal(4, 3) * 3, probabilities(4, 3)
    w, p = np.abs(normal(3)) + 0.5, np.abs(normal(4, 3)) + 0.5

    def run(lib):
        xs = lib.tensor(x).to(getattr(lib, logits)).requires_grad_()
        ts = lib.tensor(t).to(getattr(lib, target))
        weight, pos_weight = lib.tensor(w).to(lib.float64), lib.tensor(p).to(lib.float64)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(
            xs, ts, weight=weight, pos_weight=pos_weight)
        loss.backward()
        return loss, xs.grad

    (ours, our_grad), (theirs, their_grad) = run(ad), run(torch)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.") == target
    assert str(our_grad.dtype) == str(their_grad.dtype).removeprefix("torch.") == logits
    tol = 1e-6 if target == logits == "float64" else 2e-2
    assert_close(ours.data, theirs, rtol=tol, atol=tol, what="loss")
    assert_close(our_grad.data, their_grad, rtol=tol, atol=tol, what="gradient")


def test_bce_with_logits_refuses_an_integer_target_as_torch():
    x = normal(3)
    with pytest.raises(RuntimeError):
        torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(x),
                                                             torch.tensor([1, 0, 1]))
    with pytest.raises(RuntimeError, match="must be floating"):
        F.binary_cross_entropy_with_logits(ad.tensor(x), ad.tensor(np.array([1, 0, 1])))


@pytest.mark.parametrize("make, kwargs", [
    (lambda: np.array([1, 0, 3]), {}),
    (lambda: np.array([[1, 0], [2, 4]]), {"num_classes": 6}),
    (lambda: np.array(2), {"num_classes": 4}),
    (lambda: np.zeros((0,), np.int64), {"num_classes": 3}),
])
def test_one_hot_matches_torch(make, kwargs):
    ours = F.one_hot(ad.tensor(make()), **kwargs)
    theirs = torch.nn.functional.one_hot(torch.tensor(make()), **kwargs)
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours.data, theirs.numpy())


@pytest.mark.parametrize("make, kwargs", [
    (lambda lib: lib.tensor([1.0, 2.0]), {}),
    (lambda lib: lib.tensor([-1, 2]), {}),
    (lambda lib: lib.tensor([3, 1]), {"num_classes": 3}),
    (lambda lib: lib.zeros(0, dtype=lib.int64), {}),
])
def test_one_hot_errors_match_torch(make, kwargs):
    with pytest.raises(RuntimeError):
        torch.nn.functional.one_hot(make(torch), **kwargs)
    with pytest.raises(RuntimeError, match="one_hot"):
        F.one_hot(make(ad), **kwargs)


@pytest.mark.parametrize("call, error", [
    (lambda lib, F: F.binary_cross_entropy(lib.tensor([1.5]), lib.tensor([1.0])), RuntimeError),
    (lambda lib, F: F.binary_cross_entropy(lib.tensor([0.5, 0.5]), lib.tensor([1.0])),
     ValueError),
    (lambda lib, F: F.binary_cross_entropy(lib.tensor([0.5, 0.5]), lib.tensor([1, 0])),
     RuntimeError),
    (lambda lib, F: F.binary_cross_entropy_with_logits(lib.tensor([0.5, 0.5]),
                                                       lib.tensor([1.0])), ValueError),
    (lambda lib, F: F.cross_entropy(lib.ones(3, 4), lib.tensor([1, 2, 3]),
                                    label_smoothing=1.5), RuntimeError),
])
def test_errors_match_torch(call, error):
    with pytest.raises(error):
        call(torch, torch.nn.functional)
    with pytest.raises(error):
        call(ad, F)


def test_embedding_module_loads_torch_and_keeps_padding_row():
    torch.manual_seed(0)
    theirs = torch.nn.Embedding(6, 4, padding_idx=-2)
    ours = nn.Embedding(6, 4, padding_idx=-2)
    assert ours.padding_idx == theirs.padding_idx == 4
    np.testing.assert_array_equal(ours.weight.data[4], np.zeros(4, np.float32))
    ours.load_state_dict(theirs.state_dict())
    idx = np.array([[4, 1, 4], [0, 5, 4]])
    ours(ad.tensor(idx)).sum().backward()
    theirs(torch.tensor(idx)).sum().backward()
    np.testing.assert_array_equal(ours.weight.grad.data, theirs.weight.grad.numpy())
    assert not ours.weight.grad.data[4].any()


class TestDropout:
    """The engine draws its own masks, so values are compared to torch's by
    the rule, not bit for bit: kept elements scaled by 1/(1-p), the rest 0,
    the kept fraction near 1-p, the gradient through the same mask."""

    def test_kept_elements_are_scaled_and_gradient_uses_the_mask(self):
        x = ad.tensor(np.abs(normal(200, 50)) + 0.1, requires_grad=True)
        layer = nn.Dropout(p=0.3)
        y = layer(x)
        kept = y.data != 0
        np.testing.assert_allclose(y.data[kept], x.data[kept] / 0.7, rtol=1e-6)
        cot = normal(200, 50)
        y.backward(ad.tensor(cot))
        np.testing.assert_allclose(x.grad.data, np.where(kept, cot / 0.7, 0), rtol=1e-6)

    def test_kept_fraction_matches_torch_within_sampling_noise(self):
        """10,000 Bernoulli(0.7) draws: standard deviation of the fraction
        sqrt(0.7 * 0.3 / 1e4) = 0.0046, so 5 sigma is 0.023."""
        x = np.ones((100, 100), np.float32)
        ours = (nn.Dropout(0.3)(ad.tensor(x)).data != 0).mean()
        theirs = (torch.nn.Dropout(0.3)(torch.tensor(x)) != 0).float().mean().item()
        assert abs(ours - 0.7) < 0.023 and abs(theirs - 0.7) < 0.023

    def test_eval_is_identity_as_torch(self):
        x = normal(4, 5)
        ours, theirs = nn.Dropout(0.5), torch.nn.Dropout(0.5)
        ours.eval()
        theirs.eval()
        np.testing.assert_array_equal(ours(ad.tensor(x)).data, theirs(torch.tensor(x)).numpy())

    @pytest.mark.parametrize("p", [-0.1, 1.5])
    def test_bad_probability_raises_value_error_as_torch(self, p):
        with pytest.raises(ValueError):
            torch.nn.Dropout(p)
        with pytest.raises(ValueError, match="between 0 and 1"):
            nn.Dropout(p)
