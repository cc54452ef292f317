"""The references that are not torch calls themselves, checked against torch or theory.

* lab 4's autocast rule over the engine's policy tables against real ``torch.autocast``
  (every CPU case here; every CUDA case where a GPU is visible), and the support cell's
  excerpt of the tables against ``chapters.amp.policies``;
* lab 3's pipeline simulation against the closed forms for GPipe and 1F1B.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.spec import load_lab
from chapters.amp.policies import POLICIES
from chapters.distributed.pipeline import gpipe_schedule, one_f_one_b_schedule
from labs.lab3_distributed.spec import ref_pipeline_timeline

from .labkit import solution_namespace

TORCH_OPS = {
    "matmul": torch.matmul, "mm": torch.mm, "softmax": lambda x: torch.softmax(x, -1),
    "relu": torch.relu, "cat": lambda *xs: torch.cat(xs), "linear": F.linear,
    "mse_loss": F.mse_loss, "add": torch.add, "mul": torch.mul, "exp": torch.exp,
    "addcmul": torch.addcmul, "layer_norm": lambda x: F.layer_norm(x, (4,)),
}


def _autocast_cases(device_type):
    ex = load_lab("lab4_amp").exercise("autocast_dtype")
    return [pytest.param(c, id=c.name) for c in ex.cases
            if c.kwargs.get("device_type", "cuda") == device_type]


def _run_under_autocast(case, device):
    op, dtypes = case.args
    low = getattr(torch, case.kwargs.get("dtype", "float16"))
    inputs = [(torch.arange(16, device=device) % 5 + 1).reshape(4, 4).to(getattr(torch, d))
              for d in dtypes]
    if op == "linear":
        inputs[2] = inputs[2][0]
    with torch.autocast(device, dtype=low):
        out = TORCH_OPS[op](*inputs)
    return str(out.dtype).removeprefix("torch.")


def _expected(case):
    return load_lab("lab4_amp").exercise("autocast_dtype").reference(*case.args, **case.kwargs)


@pytest.mark.parametrize("case", _autocast_cases("cpu"))
def test_autocast_rule_matches_torch_on_cpu(case):
    assert _run_under_autocast(case, "cpu") == _expected(case)


@pytest.mark.cuda
@pytest.mark.parametrize("case", _autocast_cases("cuda"))
def test_autocast_rule_matches_torch_on_cuda(case):
    assert _run_under_autocast(case, "cuda") == _expected(case)


def test_support_cell_excerpt_agrees_with_the_engine_tables():
    excerpt = solution_namespace("lab4_amp")["AUTOCAST_POLICY"]
    for device, lists in excerpt.items():
        for policy, ops in lists.items():
            for op in ops:
                assert POLICIES[device].get(op) == policy, (device, op)
    ex = load_lab("lab4_amp").exercise("autocast_dtype")
    for case in ex.cases:   # ops the cases use but the excerpt leaves out are unlisted in torch
        op, device = case.args[0], case.kwargs.get("device_type", "cuda")
        if not any(op in ops for ops in excerpt[device].values()):
            assert POLICIES[device].get(op) is None, (device, op)


@pytest.mark.parametrize("schedule", [gpipe_schedule, one_f_one_b_schedule])
@pytest.mark.parametrize(("p", "m"), [(1, 3), (2, 2), (4, 8), (5, 3), (8, 16)])
def test_pipeline_simulation_matches_the_closed_form(schedule, p, m):
    t_f, t_b = 1.0, 2.0
    result = ref_pipeline_timeline([schedule(p, m, s) for s in range(p)], t_f, t_b)
    assert result["makespan"] == pytest.approx((m + p - 1) * (t_f + t_b))
    assert result["bubble_fraction"] == pytest.approx((p - 1) / (m + p - 1))
    peaks = [m] * p if schedule is gpipe_schedule else [min(p - s, m) for s in range(p)]
    assert result["peak_in_flight"] == peaks


def test_column_parallel_reference_reassembles_the_full_layer():
    ex = load_lab("lab3_distributed").exercise("column_parallel_backward")
    for case in ex.cases:
        x, _, g, p = case.args
        got = ex.reference(*case.args)
        g2, x2 = g.reshape(-1, g.shape[-1]), x.reshape(-1, x.shape[-1])
        assert np.allclose(np.concatenate(got["grad_weight"]), g2.T @ x2)
        assert np.allclose(np.concatenate(got["grad_bias"]), g2.sum(axis=0))
        assert np.allclose(got["grad_input"], sum(got["grad_input_partials"]))
        assert len(got["grad_bias"]) == p
