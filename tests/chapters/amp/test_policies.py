"""The CPU policy table against torch.autocast("cpu"), row by row, for torch
functions beyond the engine's own ops: each row's policy predicts the dtype
torch actually returns (derived by running torch, not by reading a list).
Each engine op's category, declared at its registration, against the casts
torch.autocast("cpu") makes for the same call; and the text lists hold no
engine op."""

import pytest
import torch
import torch.nn.functional as TF
from torch.utils._python_dispatch import TorchDispatchMode

from chapters.amp import policies
from chapters.amp.policies import FLOAT32, LOWER, POLICIES, PROMOTE, SUPPORTED_DTYPES
from chapters.autodiff.dispatch import AUTOCAST
from tests.chapters.amp.test_autocast import OPS, inputs, make, public_op_names


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
    assert {"matmul", "linear", "conv2d", "cross_entropy", "cat", "bmm", "prod"} <= set(AUTOCAST)
    for name, categories in AUTOCAST.items():
        for device, table in POLICIES.items():
            assert table.get(name) == categories.get(device), (name, device)
    with pytest.raises(ValueError, match=r"\['matmul'\] are listed here"):
        policies._table("cpu", "matmul", "", "")


def test_the_lists_hold_only_ops_the_engine_does_not_define():
    """An engine op (also one that declares no category, and also under its
    operator's name) has no row in the text lists: its registration decides."""
    engine = policies.engine_ops()
    assert engine["__matmul__"] == "matmul" and engine["cumsum"] == "cumsum"
    for list_name in ("_CUDA_LOWER", "_CUDA_FLOAT32", "_CUDA_PROMOTE", "_CPU_LOWER",
                      "_CPU_FLOAT32", "_CPU_PROMOTE"):
        listed = set(getattr(policies, list_name).split())
        assert not listed & engine.keys(), f"{list_name} lists engine ops: {listed & engine.keys()}"
    for rows in ("cumsum", "prod log1p", "__pow__"):  # undeclared, declared, an operator
        with pytest.raises(ValueError, match="declare each category where its op is registered"):
            policies._table("cuda", "", rows, "")


def test_a_public_op_declares_one_known_category_per_device():
    from chapters.autodiff.dispatch import public

    with pytest.raises(ValueError, match="unknown autocast categories"):
        public("my_op_with_a_typo", autocast={"cpu": "lower"})
    with pytest.raises(ValueError, match="already declared"):
        public("matmul", autocast={"cpu": FLOAT32})


# ---------------------------------------------------------------------------
# Each engine op's declared CPU category against what torch.autocast does to
# the same call: the casts autocast inserts are observed below it, with a
# TorchDispatchMode (each one is an aten._to_copy to the new dtype).


class CastLog(TorchDispatchMode):
    """Records every cast torch makes below autocast: (from dtype, to dtype)."""

    def __init__(self):
        super().__init__()
        self.casts = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.ops.aten._to_copy.default and "dtype" in kwargs:
            self.casts.append((args[0].dtype, kwargs["dtype"]))
        return func(*args, **kwargs)


def torch_casts(name: str, pattern: tuple, low, enabled: bool) -> list:
    """The casts torch makes running ``OPS[name]`` on inputs of dtypes ``pattern``."""
    xs = [make("torch", a, d) for a, d in zip(inputs(len(pattern)), pattern, strict=True)]
    with CastLog() as log, torch.autocast("cpu", dtype=low, enabled=enabled):
        try:
            OPS[name][0](torch, TF, *xs)
        except RuntimeError:
            pass  # a dtype mix the op refuses: the casts made before it still count
    return log.casts


def autocast_casts(name: str, pattern: tuple, low) -> list:
    """The casts autocast adds to the call: those made with it minus those made without."""
    added = torch_casts(name, pattern, low, enabled=True)
    for cast in torch_casts(name, pattern, low, enabled=False):
        if cast in added:
            added.remove(cast)
    return added


def torch_cpu_category(name: str, low_name: str) -> str | None:
    """What torch's CPU autocast does to the op: float32 inputs cast to the low
    dtype (lower precision), low inputs cast to float32 (float32), or a low
    input cast up to its float32 partner (promote); else unchanged (None)."""
    low, count = getattr(torch, low_name), OPS[name][1]
    if (torch.float32, low) in autocast_casts(name, ("float32",) * count, low):
        return LOWER
    if (low, torch.float32) in autocast_casts(name, (low_name,) * count, low):
        return FLOAT32
    mixed = (low_name,) + ("float32",) * (count - 1)
    if count > 1 and (low, torch.float32) in autocast_casts(name, mixed, low):
        return PROMOTE
    return None


def torch_cpu_autocasts_to(low_name: str) -> bool:
    with torch.autocast("cpu", dtype=getattr(torch, low_name)):
        return torch.is_autocast_enabled("cpu") and \
            torch.get_autocast_dtype("cpu") == getattr(torch, low_name)


def test_the_cast_observer_sees_autocast_casts():
    """The observer itself: matmul casts its float32 inputs down, prod casts
    bfloat16 up, cat promotes, add is left alone."""
    assert torch_cpu_category("matmul", "bfloat16") == LOWER
    assert torch_cpu_category("prod", "bfloat16") == FLOAT32
    assert torch_cpu_category("cat", "bfloat16") == PROMOTE
    assert torch_cpu_category("add", "bfloat16") is None


@pytest.mark.parametrize("low", SUPPORTED_DTYPES["cpu"])
@pytest.mark.parametrize("name", sorted(public_op_names()))
def test_each_engine_op_declares_what_torch_cpu_autocast_does(name, low):
    if not torch_cpu_autocasts_to(low):
        pytest.skip(f"this torch's CPU autocast does not run ops in {low}")
    declared = AUTOCAST.get(name, {}).get("cpu")
    observed = torch_cpu_category(name, low)
    assert declared == observed, (
        f"{name}: its registration declares {declared!r} for cpu, but torch.autocast('cpu', "
        f"{low}) makes it {observed!r}; fix the public({name!r}, autocast=...) registration")
