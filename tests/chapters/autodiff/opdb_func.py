"""Op-table entries of the functional additions: activations, normalize and
group_norm, the distance losses, cosine_similarity, pairwise_distance and the
1-D and adaptive pools (see opdb.py for what an entry holds)."""

from __future__ import annotations

import numpy as np

from tests.chapters.autodiff.opdb import (
    _INT64_ONLY,
    REALS,
    SPECIAL,
    OpEntry,
    Tol,
    elementwise,
    entry,
    error,
    every_other_row,
    functional,
    one,
    ones_,
    transposed,
    x,
)


def _kinks(*points) -> np.ndarray:
    """The points where a piecewise activation changes piece, with neighbours."""
    return np.array([p + d for p in points for d in (-0.25, 0.0, 0.25)])


#: name -> (keyword arguments, the kinks of its pieces)
_ACTIVATIONS = {
    "softplus": ({}, (0.0,)),
    "elu": ({"alpha": 0.7}, (0.0,)),
    "selu": ({}, (0.0,)),
    "celu": ({"alpha": 1.5}, (0.0,)),
    "mish": ({}, (0.0,)),
    "logsigmoid": ({}, (0.0,)),
    "hardtanh": ({"min_val": -0.5, "max_val": 2.0}, (-0.5, 2.0)),
    "relu6": ({}, (0.0, 6.0)),
    "hardsigmoid": ({}, (-3.0, 3.0)),
    "hardswish": ({}, (-3.0, 3.0)),
}


#: torch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32
_ACTIVATION_TOL = {"hardsigmoid": {"float64": Tol(1e-10, 1e-10, 1e-7, 1e-7)}}


def _activation_entries() -> list[OpEntry]:
    def samples(kwargs, kinks):
        def make(rng):
            wide = [one(s.desc, *(a * 3 for a in s.arrays), view=s.view, **kwargs)
                    for s in elementwise(rng, REALS)]
            return [*wide, one("kinks", _kinks(*kinks), **kwargs),
                    one("special", *SPECIAL.arrays, **kwargs)]
        return make

    entries = [entry(f"F.{name}", {f"F.{name}": functional(name)}, samples(kwargs, kinks),
                     tol=_ACTIVATION_TOL.get(name, {}))
               for name, (kwargs, kinks) in _ACTIVATIONS.items()]
    entries.append(entry("F.softplus.beta", {"F.softplus": functional("softplus")},
                         lambda rng: [one("beta", x(rng, 3, 4) * 5, beta=2.0, threshold=4.0)]))
    return entries


def _normalization_entries() -> list[OpEntry]:
    return [
        entry("F.normalize", {"F.normalize": functional("normalize")}, lambda rng: [
            one("dim1", x(rng, 3, 4)), one("p1-dim0", x(rng, 3, 4), p=1.0, dim=0),
            one("inf", x(rng, 3, 4), p=float("inf"), dim=-1),
            one("0d", x(rng), dim=0), one("empty", x(rng, 0, 3)),
            one("zero-row", np.array([[0.0, 0.0], [3.0, -4.0]])),
            one("transposed", x(rng, 4, 3), view=transposed)],
            errors=[error("dim out of range", lambda lib, F, x: F.normalize(x, dim=2),
                          ones_(2, 3))]),
        entry("F.group_norm", {"F.group_norm": lambda lib, F, x, w, b, **kw: F.group_norm(
            x, 2, w, b, **kw)}, lambda rng: [
                one("4d", x(rng, 2, 4, 3, 3), x(rng, 4), x(rng, 4)),
                one("2d-eps", x(rng, 3, 6), x(rng, 6), x(rng, 6), eps=1e-3),
                one("empty-batch", x(rng, 0, 4, 3), x(rng, 4), x(rng, 4))],
            tol={"float16": Tol(4e-3, 4e-3, 4e-3, 4e-3)},
            errors=[error("groups do not divide channels", lambda lib, F, x: F.group_norm(
                x, 3), ones_(2, 4, 2)),
                error("1-d input", lambda lib, F, x: F.group_norm(x, 1), ones_(4))]),
        entry("F.group_norm.plain", {"F.group_norm": lambda lib, F, x: F.group_norm(x, 3)},
              lambda rng: [one("3d", x(rng, 2, 6, 5))]),
    ]


def _pair_samples(rng) -> list:
    return [one("2d", x(rng, 3, 4), x(rng, 3, 4)),
            one("broadcast", x(rng, 3, 1), x(rng, 1, 4)),
            one("0d", x(rng), x(rng)),
            one("empty", x(rng, 0, 3), x(rng, 0, 3)),
            one("strided", x(rng, 6, 4), x(rng, 3, 4), view=every_other_row)]


def _distance_entries() -> list[OpEntry]:
    def far_and_near(rng):
        """Differences on both sides of beta = 0.5 and at |d| = 0.5 exactly."""
        base = x(rng, 3, 4)
        step = rng.choice([-2.0, -0.5, -0.2, 0.2, 0.5, 2.0], size=(3, 4))
        return base, base + step

    def dist_samples(**kw):
        def make(rng):
            return [*[one(s.desc, *s.arrays, view=s.view, **kw) for s in _pair_samples(rng)],
                    one("at-beta", *far_and_near(rng), reduction="none", **kw),
                    one("sum", *far_and_near(rng), reduction="sum", **kw)]
        return make

    probs = lambda rng, *shape: rng.dirichlet(np.ones(shape[-1]), shape[:-1])  # noqa: E731
    return [
        entry("F.smooth_l1_loss", {"F.smooth_l1_loss": functional("smooth_l1_loss")},
              dist_samples(beta=0.5),
              errors=[error("negative beta", lambda lib, F, x: F.smooth_l1_loss(
                  x, x, beta=-1.0), ones_(3))]),
        entry("F.smooth_l1_loss.l1", {"F.smooth_l1_loss": functional("smooth_l1_loss")},
              lambda rng: [one("beta0", *far_and_near(rng), beta=0.0)]),
        entry("F.huber_loss", {"F.huber_loss": functional("huber_loss")},
              dist_samples(delta=0.5),
              errors=[error("delta 0", lambda lib, F, x: F.huber_loss(x, x, delta=0.0),
                            ones_(3))]),
        entry("F.kl_div", {"F.kl_div": functional("kl_div")}, lambda rng: [
            one("batchmean", np.log(probs(rng, 3, 4)), probs(rng, 3, 4),
                reduction="batchmean"),
            one("none", np.log(probs(rng, 3, 4)), probs(rng, 3, 4), reduction="none"),
            one("sum-broadcast", np.log(probs(rng, 3, 4)), probs(rng, 1, 4), reduction="sum"),
            one("log-target", np.log(probs(rng, 2, 5)), np.log(probs(rng, 2, 5)),
                reduction="batchmean", log_target=True),
            one("0d", x(rng, domain=(-2.0, -0.1)), x(rng, domain=(0.1, 1.0))),
            one("empty", x(rng, 0, 3), x(rng, 0, 3, domain=(0.1, 1.0)), reduction="sum")],
            errors=[error("unknown reduction", lambda lib, F, x: F.kl_div(
                x, x, reduction="avg"), ones_(3))]),
        entry("F.cosine_similarity", {"F.cosine_similarity": functional("cosine_similarity")},
              lambda rng: [
                  one("dim1", x(rng, 3, 4), x(rng, 3, 4)),
                  one("broadcast-dim-1", x(rng, 3, 1, 4), x(rng, 2, 4), dim=-1),
                  one("broadcast-along-dim", x(rng, 1, 4), x(rng, 3, 4), dim=0),
                  one("zero-vector", np.zeros((2, 3)), x(rng, 2, 3)),
                  one("empty", x(rng, 0, 3), x(rng, 0, 3)),
                  one("transposed", x(rng, 4, 3), x(rng, 3, 4), view=transposed)],
              errors=[error("shapes do not broadcast", lambda lib, F, a, b:
                            F.cosine_similarity(a, b), ones_(2, 3), ones_(2, 4)),
                      error("dim out of range", lambda lib, F, a: F.cosine_similarity(
                          a, a, dim=2), ones_(2, 3))]),
        entry("F.pairwise_distance", {"F.pairwise_distance": functional("pairwise_distance")},
              lambda rng: [*_pair_samples(rng),
                           one("p1-keepdim", x(rng, 3, 4), x(rng, 4), p=1.0, keepdim=True),
                           one("pinf", x(rng, 3, 4), x(rng, 3, 4), p=float("inf"))],
              errors=[error("sizes differ", lambda lib, F, a, b: F.pairwise_distance(a, b),
                            ones_(2, 3), ones_(2, 4))]),
    ]


def _pool_entries() -> list[OpEntry]:
    return [
        entry("F.max_pool1d", {"F.max_pool1d": functional("max_pool1d")}, lambda rng: [
            one("k2", x(rng, 2, 3, 8), kernel_size=2),
            one("unbatched", x(rng, 3, 7), kernel_size=3, stride=2, padding=1),
            one("dilation-ceil", x(rng, 1, 2, 9), kernel_size=2, dilation=2, ceil_mode=True),
            one("empty-batch", x(rng, 0, 2, 6), kernel_size=2)],
            errors=[error("4-d input", lambda lib, F, x: F.max_pool1d(x, 2), ones_(1, 1, 2, 5)),
                    error("padding over half the kernel", lambda lib, F, x: F.max_pool1d(
                        x, 2, padding=2), ones_(1, 2, 5))]),
        entry("F.avg_pool1d", {"F.avg_pool1d": functional("avg_pool1d")}, lambda rng: [
            one("k2", x(rng, 2, 3, 8), kernel_size=2),
            one("pad-no-count", x(rng, 3, 7), kernel_size=3, stride=2, padding=1,
                count_include_pad=False),
            one("ceil", x(rng, 1, 2, 7), kernel_size=(2,), ceil_mode=True),
            one("empty-batch", x(rng, 0, 2, 6), kernel_size=2)],
            errors=[error("1-d input", lambda lib, F, x: F.avg_pool1d(x, 2), ones_(5))],
            xfail=_INT64_ONLY),
        entry("F.adaptive_avg_pool2d", {
            "F.adaptive_avg_pool2d": functional("adaptive_avg_pool2d")}, lambda rng: [
                one("uneven", x(rng, 2, 3, 5, 7), output_size=(2, 3)),
                one("global", x(rng, 2, 3, 4, 4), output_size=1),
                one("keep-width", x(rng, 3, 5, 7), output_size=(3, None)),
                one("upsample", x(rng, 1, 2, 3, 2), output_size=(4, 5)),
                one("empty-batch", x(rng, 0, 2, 5, 5), output_size=2)],
            errors=[error("2-d input", lambda lib, F, x: F.adaptive_avg_pool2d(x, 2),
                          ones_(5, 5)),
                    error("three sizes", lambda lib, F, x: F.adaptive_avg_pool2d(
                        x, (1, 2, 3)), ones_(1, 2, 5, 5))]),
        entry("F.adaptive_max_pool2d", {
            "F.adaptive_max_pool2d": functional("adaptive_max_pool2d")}, lambda rng: [
                one("uneven", x(rng, 2, 3, 5, 7), output_size=(2, 3)),
                one("global", x(rng, 2, 3, 4, 4), output_size=1),
                one("unbatched", x(rng, 3, 5, 7), output_size=(3, None)),
                one("empty-batch", x(rng, 0, 2, 5, 5), output_size=2)],
            errors=[error("2-d input", lambda lib, F, x: F.adaptive_max_pool2d(x, 2),
                          ones_(5, 5))]),
    ]


def entries() -> list[OpEntry]:
    return (_activation_entries() + _normalization_entries() + _distance_entries()
            + _pool_entries())
