"""The CPU policy table against torch.autocast("cpu"), row by row, for torch
functions beyond the engine's own ops: each row's policy predicts the dtype
torch actually returns (derived by running torch, not by reading a list)."""

import pytest
import torch
import torch.nn.functional as TF

from chapters.amp.policies import FLOAT32, LOWER, POLICIES, PROMOTE, SUPPORTED_DTYPES


def x(*shape):
    return torch.rand(*shape) + 0.5


# op name in the table -> a call of it on tensors of dtype d
TORCH_CALLS = {
    "mm": lambda d: torch.mm(x(3, 3).to(d), x(3, 3).to(d)),
    "bmm": lambda d: torch.bmm(x(2, 3, 3).to(d), x(2, 3, 3).to(d)),
    "addmm": lambda d: torch.addmm(x(3, 3).to(d), x(3, 3).to(d), x(3, 3).to(d)),
    "baddbmm": lambda d: torch.baddbmm(x(2, 3, 3).to(d), x(2, 3, 3).to(d), x(2, 3, 3).to(d)),
    "addbmm": lambda d: torch.addbmm(x(3, 3).to(d), x(2, 3, 3).to(d), x(2, 3, 3).to(d)),
    "conv1d": lambda d: TF.conv1d(x(1, 2, 8).to(d), x(3, 2, 3).to(d)),
    "conv3d": lambda d: TF.conv3d(x(1, 1, 4, 4, 4).to(d), x(2, 1, 2, 2, 2).to(d)),
    "conv_transpose1d": lambda d: TF.conv_transpose1d(x(1, 2, 5).to(d), x(2, 3, 3).to(d)),
    "conv_transpose2d": lambda d: TF.conv_transpose2d(x(1, 2, 4, 4).to(d), x(2, 3, 3, 3).to(d)),
    "prelu": lambda d: TF.prelu(x(2, 3).to(d), x(1).to(d)),
    "scaled_dot_product_attention": lambda d: TF.scaled_dot_product_attention(
        x(1, 2, 4, 8).to(d), x(1, 2, 4, 8).to(d), x(1, 2, 4, 8).to(d)),
    "prod": lambda d: x(4).to(d).prod(),
    "binary_cross_entropy": lambda d: TF.binary_cross_entropy(
        (x(4) / 3).to(d), (x(4) / 3).to(d)),
    "binary_cross_entropy_with_logits": lambda d: TF.binary_cross_entropy_with_logits(
        x(4).to(d), (x(4) / 3).to(d)),
    "cdist": lambda d: torch.cdist(x(3, 2).to(d), x(4, 2).to(d)),
    "trace": lambda d: torch.trace(x(3, 3).to(d)),
    "huber_loss": lambda d: TF.huber_loss(x(4).to(d), x(4).to(d)),
    "smooth_l1_loss": lambda d: TF.smooth_l1_loss(x(4).to(d), x(4).to(d)),
    "kl_div": lambda d: TF.kl_div(x(4).to(d), x(4).to(d), reduction="sum"),
    "soft_margin_loss": lambda d: TF.soft_margin_loss(x(4).to(d), x(4).to(d)),
    "margin_ranking_loss": lambda d: TF.margin_ranking_loss(x(4).to(d), x(4).to(d),
                                                            x(4).to(d)),
    "poisson_nll_loss": lambda d: TF.poisson_nll_loss(x(4).to(d), x(4).to(d)),
    "cosine_embedding_loss": lambda d: TF.cosine_embedding_loss(x(2, 3).to(d), x(2, 3).to(d),
                                                                torch.ones(2)),
    "inverse": lambda d: torch.inverse(torch.eye(3).to(d) * 2),
    "fft_fft": lambda d: torch.fft.fft(x(8).to(d)).real,
    "stack": lambda d: torch.stack([x(3).to(d), x(3)]),
    "cat": lambda d: torch.cat([x(3).to(d), x(3)]),
    "index_copy": lambda d: x(4, 2).to(d).index_copy(0, torch.tensor([0, 2]), x(2, 2)),
    # on neither CPU list: unchanged
    "softmax": lambda d: x(4).to(d).softmax(0),
    "layer_norm": lambda d: TF.layer_norm(x(2, 4).to(d), (4,)),
    "sum": lambda d: x(4).to(d).sum(),
    "exp": lambda d: x(4).to(d).exp(),
    "log_softmax": lambda d: TF.log_softmax(x(4).to(d), 0),
    "pow": lambda d: x(4).to(d) ** 2,
    "cumsum": lambda d: x(4).to(d).cumsum(0),
    "group_norm": lambda d: TF.group_norm(x(1, 4, 3).to(d), 2),
}


def expected_dtype(policy, input_dtype, low):
    if policy == LOWER:
        return low
    if policy == FLOAT32:
        return torch.float32
    if policy == PROMOTE:   # the calls above mix the input dtype with float32
        return torch.promote_types(input_dtype, torch.float32)
    return input_dtype     # unchanged


@pytest.mark.parametrize("low", SUPPORTED_DTYPES["cpu"])
@pytest.mark.parametrize("name", list(TORCH_CALLS))
def test_cpu_table_row_predicts_torch(name, low):
    low = getattr(torch, low)
    policy = POLICIES["cpu"].get(name)
    for input_dtype in (torch.float32, low):
        with torch.autocast("cpu", dtype=low):
            got = TORCH_CALLS[name](input_dtype).dtype
        assert got == expected_dtype(policy, input_dtype, low), \
            f"{name} (table: {policy}) on {input_dtype} under autocast('cpu', {low}) -> {got}"


def test_policy_values_and_the_cuda_cpu_difference():
    for device, table in POLICIES.items():
        assert set(table.values()) <= {LOWER, FLOAT32, PROMOTE}, device
    for name in ("softmax", "layer_norm", "sum", "exp", "log_softmax", "pow", "cumsum"):
        assert POLICIES["cuda"][name] == FLOAT32 and name not in POLICIES["cpu"]


def test_the_engines_ops_declare_their_category_where_they_are_registered():
    """matmul, linear, the losses, ... carry their autocast category in their
    ``public(...)`` registration; the policy tables take those rows from there."""
    from chapters.amp import policies
    from chapters.autodiff.dispatch import AUTOCAST

    assert {"matmul", "linear", "conv2d", "cross_entropy", "cat"} <= set(AUTOCAST)
    for name, categories in AUTOCAST.items():
        for device, table in POLICIES.items():
            assert table.get(name) == categories.get(device), (name, device)
    with pytest.raises(ValueError, match="'matmul' is both declared"):
        policies._table("cpu", "matmul", "", "")


def test_a_public_op_declares_one_known_category_per_device():
    from chapters.autodiff.dispatch import public

    with pytest.raises(ValueError, match="unknown autocast categories"):
        public("my_op_with_a_typo", autocast={"cpu": "lower"})
    with pytest.raises(ValueError, match="already declared"):
        public("matmul", autocast={"cpu": FLOAT32})
