"""A small lab for the autograder's own tests: four exercises over plain values,
one of them using a support-cell class, with public and hidden cases."""

from collections import Counter
from pathlib import Path

import numpy as np

from autograder.spec import Case, Exercise, LabSpec

HERE = Path(__file__).parent


def _scaled_sum(a, b):
    return np.asarray(a, dtype=np.float64) * 2.0 + np.asarray(b, dtype=np.float64)


def _word_counts(text):
    return dict(Counter(text.split()))


def _unique(xs):
    return sorted(set(xs))


def _pair_total(a, b):
    return float(a + b) * 10.0  # the support cell's Pair.total() scales by SCALE = 10


LAB = LabSpec(
    id="toy_lab",
    title="Toy lab (autograder tests)",
    source=HERE / "source.ipynb",
    exercises=(
        Exercise(
            id="scaled_sum", function="scaled_sum", reference=_scaled_sum,
            forbid_imports=("torch",), timeout_s=3.0, rtol=1e-6, atol=1e-9,
            hint="Broadcast: 2 * a + b, as float64.",
            cases=(
                Case("scalars", (1.0, 2.0)),
                Case("vectors", ([1.0, 2.0, 3.0], [0.5, 0.5, 0.5])),
                Case("broadcast", (np.arange(6.0).reshape(2, 3), np.array([1.0, -1.0, 0.0])),
                     hidden=True, points=2.0),
                Case("large", (np.linspace(-1, 1, 50), 7.25), hidden=True),
            )),
        Exercise(
            id="word_counts", function="word_counts", reference=_word_counts, compare="equal",
            timeout_s=3.0, hints=("Words are separated by whitespace; count each one.",
                                  "str.split() then count each word in a dict."),
            cases=(
                Case("two_words", ("a b a",)),
                Case("empty", ("",)),
                Case("secret_sentence", ("the cat saw the other cat",), hidden=True),
            )),
        Exercise(
            id="unique", function="unique", reference=_unique, compare="set", timeout_s=3.0,
            cases=(
                Case("small", ([3, 1, 3, 2],)),
                Case("hidden_big", (list(range(20)) * 2,), hidden=True),
            )),
        Exercise(
            id="pair_total", function="pair_total", reference=_pair_total, timeout_s=3.0,
            hint="Build a Pair from the support cell and call total().",
            cases=(
                Case("ints", (1, 2)),
                Case("floats", (0.25, 0.5), hidden=True),
            )),
    ),
)
