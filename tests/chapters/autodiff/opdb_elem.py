"""Op-table entries for the elementwise math of ``ops.transcendental``,
``ops.binary_math`` and ``ops.aliases`` (reciprocal, the hyperbolic
functions, sinc, nan_to_num, logical_*, atan2, hypot, fmax/fmin, xlogy,
logaddexp, float_power, torch's alias names), their in-place twins and the
``dtype=`` argument of softmax/log_softmax; ``opdb._build`` adds them."""

from __future__ import annotations

import numpy as np

from tests.chapters.autodiff.opdb import (
    NONZERO,
    POSITIVE,
    REALS,
    SPECIAL,
    UNIT,
    Sample,
    dtype_of,
    elementwise,
    entry,
    error,
    forms,
    function,
    one,
    ones_,
    scans,
)
from tests.chapters.autodiff.opdb_math import inplace

AT_LEAST_ONE = (1.0, 3.0)
#: pairs of special values: NaN against numbers and NaN, the infinities, signed zeros, ties
SPECIAL_PAIRS = Sample("special-pairs", (
    np.array([np.nan, 1.0, np.nan, np.inf, -np.inf, -0.0, 0.0, 2.0, 0.0]),
    np.array([1.0, np.nan, np.nan, -np.inf, np.inf, 0.0, -0.0, 2.0, 0.0])))


def _with_special(domain):
    return lambda rng: elementwise(rng, domain) + [SPECIAL]


def _pairs_with_special(first, second):
    return lambda rng: elementwise(rng, first, second) + [SPECIAL_PAIRS]


# ------------------------------------------------------------------ one input

#: name -> (domain, aliases); each has a top-level function and a Tensor method
_UNARY = {
    "reciprocal": (NONZERO, ()), "exp2": (REALS, ()), "sinh": (REALS, ()),
    "cosh": (REALS, ()), "asinh": (REALS, ("arcsinh",)), "acosh": (AT_LEAST_ONE, ("arccosh",)),
    "atanh": (UNIT, ("arctanh",)), "sinc": (REALS, ()), "deg2rad": (REALS, ()),
    "rad2deg": (REALS, ()),
}


def _unary_entries() -> list:
    out = []
    for name, (domain, aliases) in _UNARY.items():
        fns = forms(name)
        for alias in aliases:
            fns |= forms(alias)
        special = domain not in (AT_LEAST_ONE, UNIT)  # outside acosh/atanh's domain: NaN
        out.append(entry(name, fns, _with_special(domain) if special else
                         (lambda rng, d=domain: elementwise(rng, d))))
    v3 = ones_(3)
    out += [
        entry("nan_to_num", forms("nan_to_num"), _with_special(REALS),
              errors=[error("replacement not a number",
                            lambda lib, F, x: lib.nan_to_num(x, nan="zero"), v3)]),
        entry("nan_to_num.values", forms("nan_to_num"), lambda rng: [
            one("special", SPECIAL.arrays[0], nan=1.5, posinf=2.0, neginf=-3.0),
            one("only-posinf", SPECIAL.arrays[0], posinf=1e3)]),
        entry("logical_not", forms("logical_not"), _with_special(REALS), differentiable=False),
        entry("rsqrt.function", {"rsqrt": function("rsqrt")},
              lambda rng: elementwise(rng, POSITIVE)),
        entry("square.function", {"square": function("square")},
              _with_special(REALS)),
        entry("absolute", forms("absolute"), _with_special(REALS)),
        entry("negative", forms("negative"), _with_special(REALS)),
    ]
    return out


# ----------------------------------------------------------------- two inputs


def _binary_entries() -> list:
    v3, m23, m32 = ones_(3), ones_(2, 3), ones_(3, 2)
    out = []
    for name, second in (("atan2", REALS), ("hypot", REALS), ("fmax", REALS), ("fmin", REALS),
                         ("logaddexp", REALS)):
        fns = forms(name) | (forms("arctan2") if name == "atan2" else {})
        out.append(entry(name, fns, _pairs_with_special(REALS, second), errors=[
            error("Python number as other", lambda lib, F, a, n=name: getattr(lib, n)(a, 2.0),
                  v3),
            error("shapes that do not broadcast",
                  lambda lib, F, a, b, n=name: getattr(lib, n)(a, b), m23, m32)]))
    out += [
        entry("xlogy", forms("xlogy"), _pairs_with_special(REALS, POSITIVE)),
        entry("xlogy.numbers", {"xlogy": lambda lib, F, a: lib.xlogy(a, 3.0),
                                "Tensor.xlogy": lambda lib, F, a: a.xlogy(2)},
              lambda rng: elementwise(rng, REALS)),
        entry("xlogy.number-first", {"xlogy": lambda lib, F, b: lib.xlogy(2.5, b)},
              lambda rng: elementwise(rng, POSITIVE)),
        entry("float_power", forms("float_power"),
              lambda rng: elementwise(rng, POSITIVE, (0.0, 3.0))),
        entry("float_power.numbers", {
            "float_power": lambda lib, F, a: lib.float_power(a, 2),
            "Tensor.float_power": lambda lib, F, a: a.float_power(0.5)},
            lambda rng: elementwise(rng, POSITIVE)),
        entry("float_power.number-base", {"float_power": lambda lib, F, b: lib.float_power(
            2.0, b)}, lambda rng: elementwise(rng, REALS)),
    ]
    for name in ("logical_and", "logical_or", "logical_xor"):
        out.append(entry(name, forms(name), _pairs_with_special(REALS, REALS),
                         differentiable=False, errors=[error(
                             "Python number as other",
                             lambda lib, F, a, n=name: getattr(lib, n)(a, 1), v3)]))
    return out


# -------------------------------------------------------------------- aliases

#: alias -> (domain of the second operand or None for one input, differentiable)
_ALIASES = {
    "multiply": (REALS, True), "subtract": (REALS, True), "divide": (NONZERO, True),
    "true_divide": (NONZERO, True), "greater": (REALS, False), "less": (REALS, False),
    "greater_equal": (REALS, False), "less_equal": (REALS, False),
    "not_equal": (REALS, False),
}


def _alias_entries() -> list:
    out = [entry(name, forms(name), lambda rng, d=second: elementwise(rng, REALS, d),
                 differentiable=grad) for name, (second, grad) in _ALIASES.items()]
    out += [entry(f"{name}.function", {name: function(name)},
                  lambda rng: elementwise(rng, REALS, REALS), differentiable=False)
            for name in ("eq", "ne", "lt", "le", "gt", "ge")]
    v3 = ones_(3)
    out += [
        entry("subtract.alpha", {"subtract": lambda lib, F, a, b: lib.subtract(a, b, alpha=3)},
              lambda rng: elementwise(rng, REALS, REALS)),
        entry("divide.rounding_mode", {"divide": lambda lib, F, a, b: lib.divide(
            a, b, rounding_mode="floor")}, lambda rng: elementwise(rng, REALS, NONZERO)),
    ]
    out[[e.name for e in out].index("true_divide")].errors.append(error(
        "no rounding mode", lambda lib, F, a: lib.true_divide(a, a, rounding_mode="floor"), v3))
    return out


# ------------------------------------------------------------ softmax(dtype=)


def _softmax_entries() -> list:
    def with_dtype(op, dtype, method=False):
        if method:
            return lambda lib, F, x, dim: getattr(x, op)(dim, dtype=dtype_of(lib, dtype))
        return lambda lib, F, x, dim: getattr(lib, op)(x, dim, dtype=dtype_of(lib, dtype))

    m23 = ones_(2, 3)
    return [
        entry("softmax.dtype", {"Tensor.softmax": with_dtype("softmax", "float64", True),
                                "softmax": with_dtype("softmax", "float64")}, scans,
              errors=[error("integer dtype", with_dtype("softmax", "int64", True), m23)]),
        entry("log_softmax.dtype", {
            "Tensor.log_softmax": with_dtype("log_softmax", "float64", True),
            "log_softmax": with_dtype("log_softmax", "float64"),
            "F.log_softmax": lambda lib, F, x, dim: F.log_softmax(
                x, dim, dtype=dtype_of(lib, "float64"))}, scans,
            errors=[error("integer dtype", with_dtype("log_softmax", "int32"), m23)]),
    ]


# ------------------------------------------------------------- in-place twins

#: twin name -> domains of x and the tensor operands
_TWINS = {
    **{f"{n}_": (REALS,) for n in (
        "exp2", "sinh", "cosh", "asinh", "arcsinh", "sinc", "deg2rad", "rad2deg",
        "nan_to_num", "logical_not", "absolute", "negative")},
    "reciprocal_": (NONZERO,), "acosh_": (AT_LEAST_ONE,), "arccosh_": (AT_LEAST_ONE,),
    "atanh_": (UNIT,), "arctanh_": (UNIT,),
    **{f"{n}_": (REALS, REALS) for n in (
        "atan2", "arctan2", "hypot", "logical_and", "logical_or", "logical_xor", "multiply",
        "subtract", "greater", "less", "greater_equal", "less_equal", "not_equal")},
    "xlogy_": (REALS, POSITIVE), "divide_": (REALS, NONZERO), "true_divide_": (REALS, NONZERO),
}


def _same_shape(rng, *domains):
    return [s for s in elementwise(rng, *domains) if s.desc in ("2d", "0d", "empty")]


def _inplace_entries() -> list:
    out = [entry(name, {f"Tensor.{name}": inplace(name)},
                 lambda rng, d=domains: _same_shape(rng, *d), differentiable=False)
           for name, domains in _TWINS.items()]
    out[[e.name for e in out].index("nan_to_num_")].samples.append(SPECIAL)
    out.append(entry("float_power_", {"Tensor.float_power_": inplace("float_power_")},
                     lambda rng: _same_shape(rng, POSITIVE, REALS), differentiable=False))
    return out


def entries() -> list:
    return (_unary_entries() + _binary_entries() + _alias_entries() + _softmax_entries()
            + _inplace_entries())
