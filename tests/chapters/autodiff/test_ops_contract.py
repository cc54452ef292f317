"""einsum, dot, outer, bmm and baddbmm (ops.contract) against torch: one
lambda per case, values, dtypes and gradients (random cotangent), 0-d,
empty, non-contiguous and broadcast cases, exception types, and gradcheck
in float64 (einsum's rule is checked against central differences for
each kind of subscript: contraction, batch, summed-alone, ellipsis)."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad

from .parity import Tol, case_tests, check_both, raises_like_torch

rng = np.random.default_rng(5)


def normal(*shape):
    return np.asarray(rng.standard_normal(shape), dtype=np.float32)


SUMS = Tol(1e-5, 1e-5, 1e-4, 1e-5)  # sums of products: float32 rounding differs with order

CASES = {
    "einsum_matmul": (lambda lib, F, a, b: lib.einsum("ij,jk->ik", a, b),
                      [normal(3, 4), normal(4, 5)]),
    "einsum_implicit": (lambda lib, F, a, b: lib.einsum("ij,jk", a, b),
                        [normal(3, 4), normal(4, 2)]),
    "einsum_implicit_order": (lambda lib, F, a: lib.einsum("ba", a), [normal(3, 4)]),
    "einsum_batched": (lambda lib, F, a, b: lib.einsum("bij,bjk->bik", a, b),
                       [normal(2, 3, 4), normal(2, 4, 5)]),
    "einsum_attention_scores": (lambda lib, F, q, k: lib.einsum("bhqd,bhkd->bhqk", q, k),
                                [normal(2, 2, 3, 4), normal(2, 2, 5, 4)]),
    "einsum_sum_alone": (lambda lib, F, a, b: lib.einsum("ij,k->ik", a, b),
                         [normal(3, 4), normal(2)]),
    "einsum_total": (lambda lib, F, a: lib.einsum("ijk->", a), [normal(2, 3, 4)]),
    "einsum_transpose": (lambda lib, F, a: lib.einsum("ijk->kji", a), [normal(2, 3, 4)]),
    "einsum_outer": (lambda lib, F, a, b: lib.einsum("i,j->ij", a, b), [normal(3), normal(4)]),
    "einsum_three": (lambda lib, F, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c),
                     [normal(2, 3), normal(3, 4), normal(4, 2)]),
    "einsum_ellipsis": (lambda lib, F, a, b: lib.einsum("...ij,jk->...ik", a, b),
                        [normal(2, 3, 4), normal(4, 5)]),
    "einsum_list": (lambda lib, F, a, b: lib.einsum("i,i->", [a, b]), [normal(5), normal(5)]),
    "einsum_0d": (lambda lib, F, a, b: lib.einsum(",i->i", a, b), [normal(), normal(3)]),
    "einsum_empty": (lambda lib, F, a, b: lib.einsum("ij,jk->ik", a, b),
                     [normal(3, 0), normal(0, 2)]),
    "einsum_noncontiguous": (lambda lib, F, a, b: lib.einsum("ij,jk->ik", a.t(), b),
                             [normal(4, 3), normal(4, 5)]),
    "dot": (lambda lib, F, a, b: lib.dot(a, b), [normal(5), normal(5)]),
    "dot_method": (lambda lib, F, a, b: a.dot(b), [normal(4), normal(4)]),
    "dot_empty": (lambda lib, F, a, b: lib.dot(a, b), [normal(0), normal(0)]),
    "outer": (lambda lib, F, a, b: lib.outer(a, b), [normal(3), normal(4)]),
    "outer_method": (lambda lib, F, a, b: a.outer(b[1:]), [normal(3), normal(4)]),
    "bmm": (lambda lib, F, a, b: lib.bmm(a, b), [normal(2, 3, 4), normal(2, 4, 5)]),
    "bmm_noncontiguous": (lambda lib, F, a, b: a.bmm(b.transpose(1, 2)),
                          [normal(2, 3, 4), normal(2, 5, 4)]),
    "baddbmm": (lambda lib, F, c, a, b: lib.baddbmm(c, a, b), [normal(2, 3, 5), normal(2, 3, 4),
                                                               normal(2, 4, 5)]),
    "baddbmm_scaled_broadcast": (lambda lib, F, c, a, b: c.baddbmm(a, b, beta=0.5, alpha=2.0),
                                 [normal(3, 5), normal(2, 3, 4), normal(2, 4, 5)]),
    "baddbmm_beta0": (lambda lib, F, c, a, b: lib.baddbmm(c, a, b, beta=0),
                      [normal(2, 3, 5), normal(2, 3, 4), normal(2, 4, 5)]),
}


test_op_matches_torch_float32, test_op_matches_torch_float64 = case_tests(CASES, SUMS)


def test_integer_einsum_and_dot_match_torch():
    a = rng.integers(-4, 5, (3, 4))
    b = rng.integers(-4, 5, (4,))
    check_both(lambda lib, F, x, y: (lib.einsum("ij,j->i", x, y), lib.dot(y, y),
                                     lib.outer(y, y)), [a, b], grad_mask=[False, False])


def test_baddbmm_with_beta0_ignores_nan_in_input_as_torch():
    c = np.full((1, 2, 2), np.nan, dtype=np.float32)
    both = check_both(lambda lib, F, c, a, b: lib.baddbmm(c, a, b, beta=0),
                      [c, normal(1, 2, 3), normal(1, 3, 2)], SUMS)
    assert np.isfinite(both.engine_out.detach().numpy()).all()


ERRORS = {
    "dot_2d": (lambda lib, a: lib.dot(a, a), [normal(2, 2)]),
    "dot_lengths": (lambda lib, a: lib.dot(a, a[:2]), [normal(3)]),
    "dot_dtypes": (lambda lib, a: lib.dot(a, a.double()), [normal(3)]),
    "bmm_2d": (lambda lib, a: lib.bmm(a, a), [normal(2, 2)]),
    "bmm_batch_mismatch": (lambda lib, a: lib.bmm(a, a[:1]), [normal(2, 3, 3)]),
    "bmm_dtypes": (lambda lib, a: lib.bmm(a, a.double()), [normal(2, 3, 3)]),
    "outer_2d": (lambda lib, a: lib.outer(a, a), [normal(2, 2)]),
    "einsum_operand_count": (lambda lib, a: lib.einsum("ij,jk->ik", a), [normal(2, 2)]),
    "einsum_subscript_length": (lambda lib, a: lib.einsum("ijk->i", a), [normal(2, 2)]),
    "einsum_dtypes": (lambda lib, a: lib.einsum("i,i->", a, a.double()), [normal(3)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_torchs_exception_types(name):
    raises_like_torch(*ERRORS[name])


GRADCHECK = {
    "contraction": ("ij,jk->ik", [(2, 3), (3, 2)]),
    "batch": ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    "sum_alone": ("ij,k->i", [(2, 3), (2,)]),
    "ellipsis": ("...i,i->...", [(2, 2, 3), (3,)]),
    "three": ("i,ij,j->", [(2,), (2, 3), (3,)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_einsum_gradcheck_float64(name):
    equation, shapes = GRADCHECK[name]
    xs = [ad.tensor(normal(*s).astype(np.float64), requires_grad=True) for s in shapes]
    assert ad.gradcheck(lambda *ops: ad.einsum(equation, *ops), xs)


def test_einsum_second_derivative_and_forward_mode():
    a = ad.tensor(normal(2, 3).astype(np.float64), requires_grad=True)
    b = ad.tensor(normal(3, 2).astype(np.float64), requires_grad=True)
    (ga,) = ad.grad((ad.einsum("ij,jk->ik", a, b) ** 2).sum(), a, create_graph=True)
    (gb,) = ad.grad(ga.sum(), b)
    at, bt = a.detach(), b.detach()
    expected = torch.autograd.functional.vjp(
        lambda x, y: torch.autograd.grad((torch.einsum("ij,jk->ik", x, y) ** 2).sum(), x,
                                         create_graph=True)[0].sum(),
        (torch.from_numpy(at.numpy()), torch.from_numpy(bt.numpy())))[1][1]
    np.testing.assert_allclose(gb.numpy(), expected.numpy(), rtol=1e-10)
    ta, tb = (ad.tensor(normal(*t.shape).astype(np.float64)) for t in (a, b))
    _, tangent = ad.jvp(lambda x, y: ad.einsum("ij,jk->ik", x, y), (at, bt), (ta, tb))
    np.testing.assert_allclose(tangent.numpy(), (ta @ bt + at @ tb).numpy(), rtol=1e-12)


@pytest.mark.parametrize("equation", ["ii->i", "ii->", "bii->bi", "iij,j->i"])
def test_einsum_gradient_of_a_repeated_subscript_lands_on_the_diagonal(equation):
    shapes = {"ii->i": [(3, 3)], "ii->": [(3, 3)], "bii->bi": [(2, 3, 3)],
              "iij,j->i": [(3, 3, 4), (4,)]}[equation]
    arrays = [normal(*shape) for shape in shapes]
    ours = [ad.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    (ad.einsum(equation, *ours) ** 2).sum().backward()
    (torch.einsum(equation, *theirs) ** 2).sum().backward()
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine.grad.numpy(), reference.grad.numpy(), rtol=1e-5, atol=1e-6)
