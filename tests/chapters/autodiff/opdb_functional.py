"""Op-table entries of the functional ops (torch.nn.functional) beyond the core
table: activations (softplus to hardswish, with their kinks; softmin, softsign,
tanhshrink, threshold, glu, prelu), normalization (normalize, group_norm,
instance_norm), distances (the distance losses, cosine_similarity,
pairwise_distance), the 1-D and adaptive pools, padding strings of
conv1d/conv2d, dropout, channel and pixel shuffles, and fold/unfold (see opdb.py
for what an entry holds)."""

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


def _piecewise_activation_entries() -> list[OpEntry]:
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

def _unary(name: str, **kwargs) -> OpEntry:
    def make(rng):
        return [*[one(s.desc, *s.arrays, view=s.view, **kwargs) for s in elementwise(rng, REALS)],
                one("special", *SPECIAL.arrays, **kwargs)]
    return entry(f"F.{name}", {f"F.{name}": functional(name)}, make)


def _activation_entries() -> list[OpEntry]:
    return [
        _unary("softsign"), _unary("tanhshrink"),
        entry("F.threshold", {"F.threshold": functional("threshold")}, lambda rng: [
            *[one(s.desc, *s.arrays, view=s.view, threshold=0.5, value=-2.0)
              for s in elementwise(rng, REALS)],
            one("at-threshold", np.array([0.25, 0.5, 0.75, 1.0]), threshold=0.5, value=7.0)]),
        entry("F.softmin", {"F.softmin": functional("softmin")}, lambda rng: [
            one("dim1", x(rng, 3, 4), dim=1), one("dim0", x(rng, 3, 4), dim=0),
            one("0d", x(rng), dim=0), one("empty", x(rng, 0, 3), dim=1),
            one("transposed", x(rng, 4, 3), dim=-1, view=transposed)]),
        entry("F.glu", {"F.glu": functional("glu")}, lambda rng: [
            one("last", x(rng, 3, 4)), one("dim0", x(rng, 4, 3), dim=0),
            one("empty", x(rng, 0, 4)),
            one("transposed", x(rng, 4, 6), dim=1, view=transposed),
            one("strided", x(rng, 6, 4), view=every_other_row)],
            errors=[error("odd halving dim", lambda lib, F, x: F.glu(x), ones_(2, 3))]),
        entry("F.prelu", {"F.prelu": functional("prelu")}, lambda rng: [
            one("per-channel", x(rng, 2, 3, 4), x(rng, 3)),
            one("shared", x(rng, 2, 3, 4), x(rng, 1)),
            one("1d", x(rng, 5), x(rng, 1)),
            one("0d", x(rng), x(rng, 1)),
            one("empty-batch", x(rng, 0, 3), x(rng, 3)),
            one("transposed", x(rng, 3, 4), x(rng, 3), view=transposed),
            one("at-zero", np.array([[0.0, -1.0], [2.0, 0.0]]), x(rng, 2))],
            errors=[error("slopes do not match channels", lambda lib, F, x, w: F.prelu(x, w),
                          ones_(2, 3), ones_(2))]),
    ]


def _padding_entries() -> list[OpEntry]:
    return [
        entry("conv2d.same", {"F.conv2d": functional("conv2d")}, lambda rng: [
            one("odd-kernel", x(rng, 1, 2, 5, 5), x(rng, 3, 2, 3, 3), x(rng, 3), padding="same"),
            one("even-kernel", x(rng, 2, 2, 5, 6), x(rng, 2, 2, 2, 4), padding="same"),
            one("dilated", x(rng, 1, 1, 6, 5), x(rng, 1, 1, 2, 3), padding="same",
                dilation=(3, 2)),
            one("valid", x(rng, 1, 2, 5, 5), x(rng, 3, 2, 3, 2), padding="valid")],
            xfail=_INT64_ONLY,
            errors=[error("same with stride", lambda lib, F, x, w: F.conv2d(
                x, w, padding="same", stride=2), ones_(1, 1, 4, 4), ones_(1, 1, 3, 3)),
                error("unknown padding string", lambda lib, F, x, w: F.conv2d(
                    x, w, padding="full"), ones_(1, 1, 4, 4), ones_(1, 1, 3, 3))]),
        entry("conv1d.same", {"F.conv1d": functional("conv1d")}, lambda rng: [
            one("even-kernel", x(rng, 2, 2, 7), x(rng, 3, 2, 4), x(rng, 3), padding="same"),
            one("dilated", x(rng, 1, 2, 7), x(rng, 2, 2, 3), padding="same", dilation=2),
            one("valid", x(rng, 1, 2, 7), x(rng, 2, 2, 3), padding="valid")],
            xfail=_INT64_ONLY,
            errors=[error("same with stride", lambda lib, F, x, w: F.conv1d(
                x, w, padding="same", stride=2), ones_(1, 1, 6), ones_(1, 1, 3))]),
    ]


def _dropout_entries() -> list[OpEntry]:
    """The deterministic cases (eval, p=0): the random masks are tested in
    test_nn_fnn.py by their statistics, since the streams differ from torch's."""
    return [
        entry("F.dropout1d", {"F.dropout1d": functional("dropout1d")}, lambda rng: [
            one("eval", x(rng, 2, 3, 4), p=0.5, training=False),
            one("p0-unbatched", x(rng, 3, 4), p=0.0),
            one("empty", x(rng, 0, 3, 4), p=0.0)],
            errors=[error("4-d input", lambda lib, F, x: F.dropout1d(x, 0.5),
                          ones_(2, 3, 4, 5)),
                    error("p above 1", lambda lib, F, x: F.dropout1d(x, 1.5), ones_(2, 3, 4))]),
        entry("F.dropout2d", {"F.dropout2d": functional("dropout2d")}, lambda rng: [
            one("eval", x(rng, 2, 3, 4, 4), p=0.5, training=False),
            one("p0", x(rng, 2, 3, 4, 4), p=0.0),
            one("empty", x(rng, 0, 3, 2, 2), p=0.0)],
            errors=[error("p below 0", lambda lib, F, x: F.dropout2d(x, -0.1),
                          ones_(2, 3, 4, 4))]),
    ]


def _instance_norm_entries() -> list[OpEntry]:
    return [
        entry("F.instance_norm", {"F.instance_norm": lambda lib, F, x, w, b, **kw:
                                  F.instance_norm(x, weight=w, bias=b, **kw)}, lambda rng: [
            one("3d", x(rng, 2, 3, 5), x(rng, 3), x(rng, 3)),
            one("4d-eps", x(rng, 2, 3, 4, 3), x(rng, 3), x(rng, 3), eps=1e-3),
            one("transposed", x(rng, 2, 5, 3), x(rng, 3), x(rng, 3),
                view=lambda t: t.transpose(1, 2))],
            # bfloat16: the engine rounds x_hat to bfloat16 before the affine
            # (one ulp of 2^-8 relative, times weights up to 3), torch's kernel does not
            tol={"float16": Tol(4e-3, 4e-3, 4e-3, 4e-3), "bfloat16": Tol(4e-2, 4e-2)},
            errors=[error("one position", lambda lib, F, x: F.instance_norm(x),
                          ones_(2, 3, 1))]),
        entry("F.instance_norm.plain", {"F.instance_norm": functional("instance_norm")},
              # an empty batch only without weights: torch's affine path then
              # raises an IndexError from inside its kernel (not mirrored)
              lambda rng: [one("no-affine", x(rng, 2, 4, 6)),
                           one("empty-batch", x(rng, 0, 3, 4))]),
        entry("F.instance_norm.running", {"F.instance_norm": lambda lib, F, x, m, v:
                                          F.instance_norm(x, m.detach(), v.detach().abs(),
                                                          use_input_stats=False)},
              lambda rng: [one("eval", x(rng, 2, 3, 4), x(rng, 3), x(rng, 3))]),
    ]


def _shuffle_entries() -> list[OpEntry]:
    """No empty batch: torch's pixel_unshuffle returns an empty input unchanged
    in shape and pixel_shuffle's backward then fails; the engine gives the
    documented shapes (test_nn_fnn.py checks them)."""
    return [
        entry("F.pixel_shuffle", {"F.pixel_shuffle": functional("pixel_shuffle")}, lambda rng: [
            one("4d", x(rng, 2, 8, 2, 3), upscale_factor=2),
            one("unbatched", x(rng, 9, 2, 2), upscale_factor=3),
            one("5d", x(rng, 2, 1, 4, 2, 1), upscale_factor=2),
            one("transposed", x(rng, 1, 4, 3, 2), upscale_factor=2,
                view=lambda t: t.transpose(2, 3))],
            errors=[error("channels not divisible", lambda lib, F, x: F.pixel_shuffle(x, 2),
                          ones_(1, 3, 2, 2)),
                    error("2-d input", lambda lib, F, x: F.pixel_shuffle(x, 2), ones_(4, 2)),
                    error("factor 0", lambda lib, F, x: F.pixel_shuffle(x, 0), ones_(4, 2, 2))]),
        entry("F.pixel_unshuffle", {"F.pixel_unshuffle": functional("pixel_unshuffle")},
              lambda rng: [
                  one("4d", x(rng, 2, 2, 4, 6), downscale_factor=2),
                  one("unbatched", x(rng, 1, 3, 6), downscale_factor=3),
                  one("transposed", x(rng, 1, 2, 4, 2), downscale_factor=2,
                      view=lambda t: t.transpose(2, 3))],
              errors=[error("height not divisible", lambda lib, F, x: F.pixel_unshuffle(x, 2),
                            ones_(1, 1, 3, 4))]),
    ]


def _signs(rng, *shape) -> np.ndarray:
    return rng.choice([-1.0, 1.0], shape)


def _pair_entries() -> list[OpEntry]:
    triplet = functional("triplet_margin_loss")
    return [
        entry("F.margin_ranking_loss", {"F.margin_ranking_loss": functional(
            "margin_ranking_loss")}, lambda rng: [
                one("mean", x(rng, 5), x(rng, 5), _signs(rng, 5), margin=0.5),
                one("broadcast-none", x(rng, 3, 1), x(rng, 1, 4), _signs(rng, 3, 4),
                    reduction="none"),
                one("0d", x(rng), x(rng), _signs(rng)),
                one("empty-sum", x(rng, 0), x(rng, 0), _signs(rng, 0), reduction="sum"),
                one("transposed", x(rng, 4, 3), x(rng, 3, 4), _signs(rng, 3, 4),
                    view=transposed)],
            errors=[error("shapes do not broadcast", lambda lib, F, a, b, y:
                          F.margin_ranking_loss(a, b, y), ones_(3), ones_(3), ones_(4))]),
        entry("F.triplet_margin_loss", {"F.triplet_margin_loss": triplet}, lambda rng: [
            one("mean", x(rng, 5, 4), x(rng, 5, 4), x(rng, 5, 4)),
            one("swap-p1-none", x(rng, 5, 4), x(rng, 5, 4), x(rng, 5, 4), p=1.0, swap=True,
                reduction="none"),
            one("unbatched-margin", x(rng, 4), x(rng, 4), x(rng, 4), margin=3.0),
            one("strided", x(rng, 6, 4), x(rng, 3, 4), x(rng, 3, 4), view=every_other_row)],
            errors=[error("negative margin", lambda lib, F, a: F.triplet_margin_loss(
                a, a, a, margin=-1.0), ones_(2, 3)),
                error("dims differ", lambda lib, F, a, b: F.triplet_margin_loss(a, a, b),
                      ones_(2, 3), ones_(3))]),
        entry("F.bilinear", {"F.bilinear": functional("bilinear")}, lambda rng: [
            one("bias", x(rng, 4, 2), x(rng, 4, 3), x(rng, 5, 2, 3), x(rng, 5)),
            one("batch-dims", x(rng, 2, 3, 2), x(rng, 2, 3, 3), x(rng, 4, 2, 3)),
            one("1d", x(rng, 2), x(rng, 3), x(rng, 4, 2, 3), x(rng, 4)),
            one("empty-batch", x(rng, 0, 2), x(rng, 0, 3), x(rng, 4, 2, 3)),
            one("transposed", x(rng, 2, 4), x(rng, 4, 3), x(rng, 5, 2, 3), view=transposed)],
            # torch rounds its intermediate product (x1 W) to the low-precision
            # dtype, the engine's one einsum rounds once at the end
            tol={"float16": Tol(1e-2, 1e-2, 1e-2, 1e-2), "bfloat16": Tol(6e-2, 6e-2, 6e-2, 6e-2)},
            errors=[error("batch dims differ", lambda lib, F, a, b, w: F.bilinear(a, b, w),
                          ones_(4, 2), ones_(3, 3), ones_(5, 2, 3))]),
    ]


#: torch's im2col/col2im kernels take floats and bool but no integer dtype; the
#: engine's compute every dtype (a gap in torch's kernels, not mirrored)
_NO_INTEGERS = {f"refuse-{d}": "torch's CPU kernel takes no integer dtype; the engine "
                "computes them" for d in ("uint8", "int8", "int16", "int32", "int64")}


def _folding_entries() -> list[OpEntry]:
    return [
        entry("F.unfold", {"F.unfold": functional("unfold")}, lambda rng: [
            one("k2", x(rng, 2, 3, 4, 4), kernel_size=2),
            one("options", x(rng, 1, 2, 7, 6), kernel_size=(3, 2), dilation=(1, 2),
                padding=1, stride=(2, 1)),
            one("unbatched", x(rng, 2, 3, 3), kernel_size=2),
            one("empty-batch", x(rng, 0, 2, 3, 3), kernel_size=2),
            one("transposed", x(rng, 1, 2, 4, 5), kernel_size=2,
                view=lambda t: t.transpose(2, 3))],
            xfail=_NO_INTEGERS,
            errors=[error("kernel larger than input", lambda lib, F, x: F.unfold(x, 3),
                          ones_(1, 1, 2, 2))]),
        entry("F.fold", {"F.fold": functional("fold")}, lambda rng: [
            one("k2", x(rng, 2, 12, 9), output_size=(4, 4), kernel_size=2),
            one("options", x(rng, 1, 12, 24), output_size=(7, 6), kernel_size=(3, 2),
                dilation=(1, 2), padding=1, stride=(2, 1)),
            one("unbatched", x(rng, 8, 4), output_size=3, kernel_size=2),
            one("empty-batch", x(rng, 0, 4, 4), output_size=(3, 3), kernel_size=2),
            one("transposed", x(rng, 1, 4, 4), output_size=(3, 3), kernel_size=2,
                view=lambda t: t.transpose(1, 2))],
            xfail=_NO_INTEGERS,
            errors=[error("wrong number of blocks", lambda lib, F, x: F.fold(x, (3, 3), 2),
                          ones_(1, 4, 5)),
                    error("rows not divisible", lambda lib, F, x: F.fold(x, (3, 3), 2),
                          ones_(1, 3, 4))]),
    ]


def entries() -> list[OpEntry]:
    return (_piecewise_activation_entries() + _activation_entries() + _normalization_entries()
            + _instance_norm_entries() + _distance_entries() + _pair_entries()
            + _pool_entries() + _padding_entries() + _dropout_entries() + _shuffle_entries()
            + _folding_entries())
