"""Autocast op policies (自动混合精度的算子策略), per device, as in PyTorch's
"Autocast Op Reference" (torch.amp documentation).

Each table maps torch's op name to one of

* ``"lower_precision"`` — cast floating inputs to the autocast dtype (float16
  or bfloat16): matmul-like ops and convolutions, where tensor cores / AMX pay
  off and float32 accumulation happens inside the kernel;
* ``"float32"`` — cast floating inputs to float32: ops whose results need range
  or precision (exp/log, reductions, norms, losses);
* ``"promote"`` — cast floating inputs to the widest floating dtype among them
  (ops that must take several inputs of one dtype, e.g. ``cat``);
* absent — *unchanged*: the op runs in whatever dtype its inputs have (relu,
  add, reshape...), with ordinary type promotion.

Only floating tensors other than float64 are cast (as torch's
``is_eligible``): integer targets and float64 tensors pass through.

The two devices differ. CUDA puts softmax, log_softmax, layer_norm, sum, exp,
log, pow and the losses in float32; the CPU list is short — there softmax,
layer_norm, sum and exp are *not* forced to float32 (a bfloat16 input stays
bfloat16), while the losses and ``prod`` are. The CPU lists are the same for
bfloat16 and float16; on CUDA too. The tests derive the expected dtypes by
running ``torch.autocast`` rather than trusting these tables.

Names are torch's public Python names where the engine's hook uses them
(``cross_entropy`` for torch's internal ``cross_entropy_loss``).

The rows of the ops the engine defines (matmul, bmm, linear, conv2d, softmax,
prod, the losses, ...) are not listed below: each is declared where the op is
registered, ``public("matmul", autocast={...})`` in :mod:`chapters.autodiff`,
and :func:`_table` merges them in (:data:`chapters.autodiff.dispatch.AUTOCAST`);
an engine op that declares nothing runs unchanged. The lists below are
torch's rows for the ops the engine does not define, and :func:`_table`
refuses a row for an engine op, also under its operator's name (``@`` is
``__matmul__``, the engine's matmul).

One known difference on CUDA: torch computes ``2 / x`` as
``x.reciprocal() * 2`` (its ``__rtruediv__`` row), and reciprocal runs in
float32 there; the engine's ``2 / x`` is its div op, which runs unchanged.
"""

from __future__ import annotations

from chapters.autodiff import Tensor  # its public ops declare their categories on import
from chapters.autodiff.dispatch import AUTOCAST, FLOAT32, LOWER_PRECISION, PROMOTE, PUBLIC_OPS

LOWER = LOWER_PRECISION

_CUDA_LOWER = """addbmm addr chain_matmul multi_dot conv3d conv_transpose1d
conv_transpose3d GRUCell LSTMCell RNNCell"""

_CUDA_FLOAT32 = """__rdiv__ cosine_embedding_loss erfinv
hinge_embedding_loss multilabel_margin_loss
multi_margin_loss pdist poisson_nll_loss
soft_margin_loss renorm"""

_CUDA_PROMOTE = """cross grid_sample tensordot"""

_CPU_LOWER = """conv3d linalg_vecdot addbmm _convolution conv_tbc mkldnn_rnn_layer
conv_transpose1d conv_transpose3d _native_multi_head_attention"""

_CPU_FLOAT32 = """avg_pool3d grid_sampler polar stft
view_as_complex cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr
pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d cosine_embedding_loss
nll_loss2d hinge_embedding_loss poisson_nll_loss
soft_margin_loss multi_margin_loss ctc_loss
multilabel_margin_loss fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft
fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond
linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals
linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv linalg_tensorsolve
fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd triangular_solve
fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d
multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex linalg_svd linalg_eig
linalg_eigh linalg_lstsq linalg_inv_ex"""

_CPU_PROMOTE = ""


def engine_ops() -> dict[str, str]:
    """Each name under which the engine defines an op -> that op's public name:
    the public ops of :mod:`chapters.autodiff`, and the Tensor operators that
    run them (``__matmul__`` -> ``matmul``)."""
    ops = {name: name for name, module in PUBLIC_OPS.items()
           if module.startswith("chapters.autodiff")}
    ops.update({attr: fn.op_name for attr, fn in vars(Tensor).items() if hasattr(fn, "op_name")})
    return ops


def _table(device: str, lower: str, float32: str, promote: str) -> dict[str, str]:
    """torch's rows for ``device``, with the rows the engine's ops declare."""
    table = {name: LOWER for name in lower.split()}
    table.update({name: FLOAT32 for name in float32.split()})
    table.update({name: PROMOTE for name in promote.split()})
    engine = engine_ops()
    listed = {name: engine[name] for name in sorted(table.keys() & engine.keys())}
    if listed:
        raise ValueError(f"autocast policies of {list(listed)} are listed here, but the engine "
                         f"defines those ops ({sorted(set(listed.values()))}); declare each "
                         "category where its op is registered, public(name, autocast={...}), "
                         "and remove the rows from this list")
    for name, categories in AUTOCAST.items():
        if device in categories:
            table[name] = categories[device]
    return table


#: device type -> {op name -> policy}; the same table serves float16 and bfloat16
POLICIES: dict[str, dict[str, str]] = {
    "cuda": _table("cuda", _CUDA_LOWER, _CUDA_FLOAT32, _CUDA_PROMOTE),
    "cpu": _table("cpu", _CPU_LOWER, _CPU_FLOAT32, _CPU_PROMOTE),
}

#: the low-precision dtypes each device's autocast accepts (torch's rule)
SUPPORTED_DTYPES = {"cuda": ("float16", "bfloat16"), "cpu": ("bfloat16", "float16")}


def policy_of(device_type: str, op_name: str) -> str | None:
    """The policy of ``op_name`` on ``device_type``; None means unchanged."""
    return POLICIES[device_type].get(op_name)
