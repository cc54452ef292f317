"""scaled_dot_product_attention, nn.MultiheadAttention and
nn.TransformerEncoderLayer against torch: forward values, input gradients
against a random cotangent and, for the modules, every parameter's gradient
after loading torch's state_dict."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.autodiff import nn
from chapters.torchcheck import assert_close

from .parity import FLOAT64, Tol, check_both

rng = np.random.default_rng(11)
# softmax of dot products of 8-16 numbers: a few float32 roundings more than one op
ATTENTION = Tol(fwd_rtol=1e-5, fwd_atol=2e-6, grad_rtol=1e-4, grad_atol=1e-5)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


CAUSAL_FLOAT = np.triu(np.full((5, 7), -np.inf, np.float32), 3)
KEEP = rng.random((5, 7)) > 0.3
KEEP[:, 0] = True  # every query keeps a key (a fully masked row is NaN in both)

SDPA_CASES = {
    "plain": (lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
              [normal(2, 5, 8), normal(2, 7, 8), normal(2, 7, 6)], None),
    "heads_scale": (lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
                    [normal(2, 3, 5, 4), normal(2, 3, 7, 4), normal(2, 3, 7, 4)], None),
    "causal": (lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
               [normal(2, 5, 8), normal(2, 5, 8), normal(2, 5, 8)], None),
    "causal_rectangular": (lambda lib, F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True), [normal(5, 4), normal(7, 4), normal(7, 3)], None),
    "bool_mask": (lambda lib, F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
                  [normal(2, 5, 8), normal(2, 7, 8), normal(2, 7, 6), KEEP], None),
    "float_mask_with_grad": (lambda lib, F, q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [normal(2, 5, 8), normal(2, 7, 8), normal(2, 7, 6),
                                normal(5, 7)], None),
    "grouped_query_heads": (lambda lib, F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, enable_gqa=True),
        [normal(2, 4, 5, 8), normal(2, 2, 5, 8), normal(2, 2, 5, 6)], None),
    "float_mask_inf": (lambda lib, F, q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, attn_mask=m), [normal(5, 8), normal(7, 8), normal(7, 6), CAUSAL_FLOAT],
        [True, True, True, False]),
}


@pytest.mark.parametrize("name", sorted(SDPA_CASES))
def test_sdpa_matches_torch(name):
    fn, arrays, grad_mask = SDPA_CASES[name]
    check_both(fn, arrays, ATTENTION, grad_mask=grad_mask)


@pytest.mark.parametrize("name", ["causal", "float_mask_with_grad"])
def test_sdpa_float64_matches_torch(name):
    fn, arrays, grad_mask = SDPA_CASES[name]
    check_both(fn, [a.astype(np.float64) if a.dtype == np.float32 else a for a in arrays],
               FLOAT64, grad_mask=grad_mask)


def test_sdpa_gradcheck():
    q, k, v = (ad.tensor(normal(2, 4, 3, dtype=np.float64), requires_grad=True)
               for _ in range(3))
    assert ad.gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                        (q, k, v))


def test_sdpa_weights_of_each_query_sum_to_one():
    """Independent of torch: with V = identity the output rows are the
    attention weights, which must sum to 1 and be 0 above the diagonal."""
    q, k = ad.tensor(normal(6, 4)), ad.tensor(normal(6, 4))
    weights = F.scaled_dot_product_attention(q, k, ad.tensor(np.eye(6, dtype=np.float32)),
                                             is_causal=True).data
    np.testing.assert_allclose(weights.sum(1), np.ones(6), rtol=1e-6)
    assert not np.triu(weights, 1).any()


@pytest.mark.parametrize("call", [
    lambda lib, F, x: F.scaled_dot_product_attention(x, x, x, attn_mask=lib.ones(3, 3).bool(),
                                                     is_causal=True),
    lambda lib, F, x: F.scaled_dot_product_attention(x, x[:, :, :2], x),
    lambda lib, F, x: F.scaled_dot_product_attention(x.reshape(1, 2, 3, 4),
                                                     lib.ones(1, 3, 3, 4), lib.ones(1, 3, 3, 4),
                                                     enable_gqa=True),
])
def test_sdpa_errors_match_torch(call):
    x = normal(2, 3, 4)
    with pytest.raises(RuntimeError):
        call(torch, torch.nn.functional, torch.tensor(x))
    with pytest.raises(RuntimeError, match="scaled_dot_product_attention"):
        call(ad, F, ad.tensor(x))


# ------------------------------------------------------------- modules


def both_modules(make):
    """The torch module and the engine one holding torch's weights."""
    torch.manual_seed(0)
    theirs = make(torch.nn)
    ours = make(nn)
    missing, unexpected = ours.load_state_dict(theirs.state_dict())
    assert not missing and not unexpected
    return ours, theirs


def check_module(ours, theirs, inputs, grad_inputs, call, tol=ATTENTION):
    """Forward, input gradients and parameter gradients of ``call(module, *inputs)``
    (the first output when it returns a tuple) against torch's."""
    ins_e = [ad.tensor(a, requires_grad=g) for a, g in zip(inputs, grad_inputs, strict=True)]
    ins_t = [torch.tensor(a, requires_grad=g) for a, g in zip(inputs, grad_inputs, strict=True)]
    out_e, out_t = call(ours, *ins_e), call(theirs, *ins_t)
    extra_e, extra_t = (out_e[1:], out_t[1:]) if isinstance(out_t, tuple) else ((), ())
    out_e, out_t = (out_e[0], out_t[0]) if isinstance(out_t, tuple) else (out_e, out_t)
    assert_close(out_e, out_t, rtol=tol.fwd_rtol, atol=tol.fwd_atol, what="output")
    for k, (e, t) in enumerate(zip(extra_e, extra_t, strict=True)):
        assert (e is None) == (t is None)
        if t is not None:
            assert_close(e, t, rtol=tol.fwd_rtol, atol=tol.fwd_atol, what=f"output {k + 1}")
    cot = rng.standard_normal(out_t.shape).astype(np.float32)
    out_e.backward(ad.tensor(cot))
    out_t.backward(torch.tensor(cot))
    for i, (e, t) in enumerate(zip(ins_e, ins_t, strict=True)):
        if t.requires_grad:
            assert_close(e.grad, t.grad, rtol=tol.grad_rtol, atol=tol.grad_atol,
                         what=f"gradient of input {i}")
    params_t = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, params_t[name].grad, rtol=tol.grad_rtol, atol=tol.grad_atol,
                     what=f"gradient of {name}")


PADDING = np.array([[False] * 6 + [True], [False] * 7])
BOOL_CAUSAL = np.triu(np.ones((7, 7), bool), 1)

MHA_CASES = {
    "self_batch_first": (True, lambda m, x: m(x, x, x), [normal(2, 7, 16)]),
    "self_sequence_first_per_head_weights": (
        False, lambda m, x: m(x, x, x, average_attn_weights=False), [normal(7, 2, 16)]),
    "cross_attention": (True, lambda m, q, kv: m(q, kv, kv), [normal(2, 5, 16),
                                                              normal(2, 7, 16)]),
    "key_value_distinct": (False, lambda m, q, k, v: m(q, k, v, need_weights=False),
                           [normal(5, 2, 16), normal(7, 2, 16), normal(7, 2, 16)]),
    "bool_causal_and_padding": (True, lambda m, x, mask, pad: m(
        x, x, x, attn_mask=mask, key_padding_mask=pad), [normal(2, 7, 16), BOOL_CAUSAL,
                                                         PADDING]),
    "float_causal_is_causal_hint": (True, lambda m, x, mask: m(
        x, x, x, attn_mask=mask, is_causal=True, need_weights=False),
        [normal(2, 7, 16), np.triu(np.full((7, 7), -np.inf, np.float32), 1)]),
    "per_head_mask": (True, lambda m, x, mask: m(x, x, x, attn_mask=mask),
                      [normal(2, 7, 16), normal(8, 7, 7)]),
    "unbatched": (True, lambda m, x: m(x, x, x), [normal(7, 16)]),
}


@pytest.mark.parametrize("name", sorted(MHA_CASES))
def test_multihead_attention_matches_torch(name):
    batch_first, call, inputs = MHA_CASES[name]
    ours, theirs = both_modules(lambda lib: lib.MultiheadAttention(16, 4,
                                                                   batch_first=batch_first))
    grad_inputs = [a.dtype == np.float32 and a.ndim >= 2 and a.shape[-1] == 16 for a in inputs]
    check_module(ours, theirs, inputs, grad_inputs, call)


def test_multihead_attention_has_torch_parameter_names_and_init():
    theirs, ours = torch.nn.MultiheadAttention(16, 4), nn.MultiheadAttention(16, 4)
    assert ([(n, tuple(p.shape)) for n, p in ours.named_parameters()]
            == [(n, tuple(p.shape)) for n, p in theirs.named_parameters()])
    assert not ours.in_proj_bias.data.any() and not ours.out_proj.bias.data.any()
    bound = np.sqrt(6 / (16 + 48))  # Xavier-uniform over the packed (48, 16) weight
    assert np.abs(ours.in_proj_weight.data).max() <= bound


def test_multihead_attention_errors_match_torch():
    with pytest.raises(AssertionError):
        torch.nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(10, 3)
    x = normal(2, 7, 16)
    for lib, module in ((torch, torch.nn.MultiheadAttention(16, 4, batch_first=True)),
                        (ad, nn.MultiheadAttention(16, 4, batch_first=True))):
        t = lib.tensor(x)
        with pytest.raises(RuntimeError):
            module(t, t, t, attn_mask=lib.zeros(5, 5))
        with pytest.raises(RuntimeError):
            module(t, t, t, is_causal=True)


LAYER_CASES = {
    "pre_norm_gelu_batch_first": dict(norm_first=True, activation="gelu", batch_first=True),
    "post_norm_relu_sequence_first": dict(norm_first=False, activation="relu",
                                          batch_first=False),
}


@pytest.mark.parametrize("name", sorted(LAYER_CASES))
def test_transformer_encoder_layer_matches_torch(name):
    options = LAYER_CASES[name]
    ours, theirs = both_modules(lambda lib: lib.TransformerEncoderLayer(
        16, 4, dim_feedforward=32, dropout=0.0, **options))
    x = normal(3, 7, 16) if options["batch_first"] else normal(7, 3, 16)
    check_module(ours, theirs, [x, np.triu(np.full((7, 7), -np.inf,
                                                                  np.float32), 1)],
                 [True, False], lambda m, x, mask: m(x, src_mask=mask, is_causal=True))


def test_transformer_encoder_layer_with_padding_matches_torch():
    ours, theirs = both_modules(lambda lib: lib.TransformerEncoderLayer(
        16, 2, dim_feedforward=24, dropout=0.0, batch_first=True, norm_first=True))
    check_module(ours, theirs, [normal(2, 7, 16), PADDING], [True, False],
                 lambda m, x, pad: m(x, src_key_padding_mask=pad))


def test_transformer_encoder_layer_rejects_unknown_activation():
    with pytest.raises(RuntimeError):
        torch.nn.TransformerEncoderLayer(16, 4, activation="swish")
    with pytest.raises(RuntimeError, match="activation"):
        nn.TransformerEncoderLayer(16, 4, activation="swish")


def test_transformer_encoder_layer_in_eval_mode_ignores_dropout_as_torch():
    ours, theirs = both_modules(lambda lib: lib.TransformerEncoderLayer(
        16, 4, dim_feedforward=32, dropout=0.3, batch_first=True, norm_first=True))
    ours.eval()
    theirs.eval()
    x = normal(2, 5, 16)
    with torch.no_grad():
        expected = theirs(torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours(ad.tensor(x)).data, expected, rtol=1e-5, atol=2e-6)


def test_attention_dropout_in_training_zeroes_weights_and_rescales():
    """Attention dropout acts on the weights: with V = identity the output rows
    are the dropped weights, each 0 or the weight / (1 - p)."""
    q, k = ad.tensor(normal(64, 8)), ad.tensor(normal(64, 8))
    eye = ad.tensor(np.eye(64, dtype=np.float32))
    weights = F.scaled_dot_product_attention(q, k, eye).data
    dropped = F.scaled_dot_product_attention(q, k, eye, dropout_p=0.25).data
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], weights[kept] / 0.75, rtol=1e-5)
    assert abs(kept.mean() - 0.75) < 0.034  # 4096 draws: 5 sigma = 0.034
