"""Forty submissions of the similarity lab: 36 written independently, 4 planted copies.

Each exercise has six solutions in genuinely different styles (a dict loop, Counter,
setdefault, sorting then grouping, recursion, ...). Independent student ``(a, b)``
uses style ``a`` for word_counts, ``b`` for run_length and ``(a + b) % 6`` for
topo_order: an orthogonal array, so two independent students share the style of at
most one exercise (as classmates do when they meet the same idiom) and never two.
A planted copy takes another student's three solutions, renames every identifier,
rewrites the comments, reorders the functions inside a cell and the exercise cells
in the notebook: what copydetect must see through.
"""

from __future__ import annotations

import builtins
import copy
import io
import keyword
import random
import re
import tokenize
from pathlib import Path

import nbformat

from autograder.notebook import exercise_meta
from autograder.release import release_notebook
from autograder.spec import load_lab

LAB_DIR = Path(__file__).parent / "similarity_lab"

WORD_COUNTS = [
    """    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return counts""",
    """    from collections import Counter
    return dict(Counter(text.lower().split()))""",
    """    table = {}
    words = text.split()
    i = 0
    while i < len(words):
        w = words[i].lower()
        table.setdefault(w, 0)
        table[w] += 1
        i += 1
    return table""",
    """    ws = sorted(t.lower() for t in text.split())
    result = {}
    start = 0
    for end in range(1, len(ws) + 1):
        if end == len(ws) or ws[end] != ws[start]:
            result[ws[start]] = end - start
            start = end
    return result""",
    """    lowered = [w.lower() for w in text.split()]
    return {w: lowered.count(w) for w in set(lowered)}""",
    """    from collections import defaultdict
    tally = defaultdict(int)
    for token in map(str.lower, text.split()):
        tally[token] += 1
    return dict(tally)""",
]

RUN_LENGTH = [
    """    out = []
    for x in xs:
        if out and out[-1][0] == x:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return out""",
    """    from itertools import groupby
    return [[key, len(list(group))] for key, group in groupby(xs)]""",
    """    if not xs:
        return []
    runs = []
    current, n = xs[0], 1
    for value in xs[1:]:
        if value == current:
            n = n + 1
        else:
            runs.append([current, n])
            current, n = value, 1
    runs.append([current, n])
    return runs""",
    """    result, i = [], 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[i]:
            j += 1
        result.append([xs[i], j - i + 1])
        i = j + 1
    return result""",
    """    def encode(rest):
        if not rest:
            return []
        k = 1
        while k < len(rest) and rest[k] == rest[0]:
            k += 1
        return [[rest[0], k]] + encode(rest[k:])
    return encode(list(xs))""",
    """    bounds = [0] + [i for i in range(1, len(xs)) if xs[i] != xs[i - 1]] + [len(xs)]
    return [[xs[a], b - a] for a, b in zip(bounds, bounds[1:]) if b > a]""",
]

TOPO_ORDER = [
    """    order, seen = [], set()

    def visit(n):
        if n not in seen:
            seen.add(n)
            for d in deps.get(n, []):
                visit(d)
            order.append(n)
    for n in sorted(deps):
        visit(n)
    return order""",
    """    done = []
    for root in sorted(deps):
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if expanded:
                done.append(node)
            else:
                stack.append((node, True))
                for child in reversed(deps.get(node, [])):
                    if child not in done:
                        stack.append((child, False))
    return done""",
    """    return _walk(deps, sorted(deps), [])


def _walk(deps, todo, acc):
    for name in todo:
        if name not in acc:
            _walk(deps, deps.get(name, []), acc)
            if name not in acc:
                acc.append(name)
    return acc""",
    """    state = {n: 0 for n in deps}
    result = []

    def dfs(u):
        state[u] = 1
        for v in deps.get(u, ()):
            if state.get(v, 0) == 0:
                dfs(v)
        state[u] = 2
        result.append(u)

    for u in sorted(state):
        if state[u] == 0:
            dfs(u)
    return result""",
    """    placed = set()
    out = []
    def place(x, path=()):
        if x in placed:
            return
        for y in deps.get(x, []):
            place(y, path + (x,))
        placed.add(x)
        out += [x]
    for x in sorted(deps.keys()):
        place(x)
    return out""",
    """    visited = {}
    sequence = []
    pending = sorted(deps)[::-1]
    while pending:
        top = pending[-1]
        if visited.get(top) == "done":
            pending.pop()
        elif visited.get(top) == "open":
            visited[top] = "done"
            sequence.append(top)
            pending.pop()
        else:
            visited[top] = "open"
            pending.extend(d for d in reversed(deps.get(top, [])) if top in visited
                           and visited.get(d) is None)
    return sequence""",
]

STYLES = {"word_counts": WORD_COUNTS, "run_length": RUN_LENGTH, "topo_order": TOPO_ORDER}
STUB = re.compile(r"^( *)raise NotImplementedError\(.*\)$", re.M)
PLANTED_FROM = ((0, 0), (1, 1), (2, 5), (4, 2))
"""The independent students (style of word_counts, of run_length) the copies copy."""


def independent_styles() -> list[tuple[int, int, int]]:
    """36 style triples; any two agree in at most one place."""
    return [(a, b, (a + b) % 6) for a in range(6) for b in range(6)]


def _solved(release, bodies: dict[str, str]):
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        meta = exercise_meta(cell)
        if meta:
            body = bodies[meta["id"]]
            cell.source = STUB.sub(lambda _, body=body: body, cell.source, count=1)
    return nb


def _disguise(source: str, rng: random.Random) -> str:
    """Rename every name the solution introduces, add a comment, and move a helper function
    before the function that calls it: what a learner does to hide a copy."""
    given = set(STYLES) | {"deps", "text", "xs"} | set(dir(builtins)) | set(keyword.kwlist)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    names = {t.string for t in tokens if t.type == tokenize.NAME and t.string not in given}
    attributes = {b.string for a, b in zip(tokens, tokens[1:], strict=False) if a.string == "."}
    renamed = {n: f"{n[:1]}{rng.randrange(100, 999)}_v" for n in sorted(names - attributes)}
    lines = source.splitlines(keepends=True)
    for t in reversed(tokens):   # names only: strings and comments keep their words
        if t.type == tokenize.NAME and t.string in renamed:
            (row, col), (_, end) = t.start, t.end
            lines[row - 1] = lines[row - 1][:col] + renamed[t.string] + lines[row - 1][end:]
    source = "".join(lines)
    blocks = re.split(r"\n\n\n(?=def )", source)
    if len(blocks) > 1:   # a cell with a helper: the helper goes first
        source = "\n\n\n".join(blocks[1:] + blocks[:1])
    return source + "\n# checked against the examples by hand\n"


def build(folder: Path, seed: int = 7) -> dict:
    """Write the 40 notebooks into ``folder``; return {"independent": [...], "planted":
    [(copy, original), ...]} (student ids)."""
    lab = load_lab(LAB_DIR)
    release = release_notebook(lab)
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    independent = []
    for n, (a, b, c) in enumerate(independent_styles()):
        student = f"student{n:02d}"
        nb = _solved(release, {"word_counts": WORD_COUNTS[a], "run_length": RUN_LENGTH[b],
                               "topo_order": TOPO_ORDER[c]})
        nbformat.write(nb, folder / f"{student}.ipynb")
        independent.append((student, nb))
    planted = []
    for k, (a, b) in enumerate(PLANTED_FROM):
        original, nb = independent[6 * a + b]
        nb = copy.deepcopy(nb)
        for cell in nb.cells:
            if exercise_meta(cell):
                cell.source = _disguise(cell.source, rng)
        exercises = [cell for cell in nb.cells if exercise_meta(cell)]
        others = [cell for cell in nb.cells if not exercise_meta(cell)]
        nb.cells = others[:1] + exercises[::-1] + others[1:]
        student = f"copy{k}"
        nbformat.write(nb, folder / f"{student}.ipynb")
        planted.append((student, original))
    return {"independent": [s for s, _ in independent], "planted": planted}
