"""A small lab for the similarity tests: three exercises whose released cells carry given
docstrings (starter code every student shares, which the comparison must ignore)."""

from collections import Counter
from pathlib import Path

from autograder.spec import Case, Exercise, LabSpec

HERE = Path(__file__).parent


def _word_counts(text):
    return dict(Counter(text.lower().split()))


def _run_length(xs):
    out = []
    for x in xs:
        if out and out[-1][0] == x:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return out


def _topo_order(deps):
    order, seen = [], set()

    def visit(n):
        if n not in seen:
            seen.add(n)
            for d in deps.get(n, []):
                visit(d)
            order.append(n)
    for n in sorted(deps):
        visit(n)
    return order


LAB = LabSpec(
    id="similarity_lab", title="Similarity lab (autograder tests)", source=HERE / "source.ipynb",
    exercises=(
        Exercise("word_counts", "word_counts", (Case("two", ("a B a",)),), _word_counts,
                 compare="equal"),
        Exercise("run_length", "run_length", (Case("small", ([1, 1, 2],)),), _run_length,
                 compare="equal"),
        Exercise("topo_order", "topo_order", (Case("chain", ({"b": ["a"], "a": []},)),),
                 _topo_order, compare="equal"),
    ))
