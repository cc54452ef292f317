"""Similarity between submissions: which pairs share code, as evidence for a person to judge.

``python -m autograder similarity LAB SUBMISSIONS_DIR`` reads every submission's
exercise cells (nothing is run), removes the released starter code and compares
every pair with copydetect, a winnowing detector (Schleimer, Wilkerson and Aiken,
SIGMOD 2003): each document is tokenized by Pygments, identifiers become one
letter (so renaming variables changes nothing), every ``k``-token window is hashed,
and the document keeps its winnowed set of hashes. Since a set has no order,
reordering functions changes nothing either. For a pair, ``similarity`` of one
side is the share of its fingerprinted tokens that lie in windows the other side
has too; a pair's score is the mean of its two sides.

The boilerplate is the release's text (:func:`autograder.release.release_notebook`):
every hash of the released exercise cells (the given wrappers, signatures,
docstrings and ``raise NotImplementedError`` stubs) is dropped from every
submission, so code all students were given never counts as shared.

:func:`similarity_report` does the work and :func:`write_page` writes one offline
HTML page (no script, nothing fetched) that ranks the pairs and shows, for the top
ones, both sides with the matching regions marked. The page says that a high score
is evidence for a person to judge, never a verdict. Everything taken from a
submission (file names, code) is HTML-escaped.
"""

from __future__ import annotations

import html
import io
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from copydetect import CodeFingerprint, compare_files

from .notebook import exercise_cells, read_submission
from .release import release_notebook
from .similarity_words import say
from .spec import LabSpec

NOISE_TOKENS = 25
"""k: matches shorter than this many (filtered) characters are ignored (copydetect's default)."""
WINDOW = 1
"""Winnowing window: 1 keeps every k-gram hash (guarantee threshold = noise threshold)."""
MAX_CODE_CHARS = 200_000
"""How much of one submission's exercise code is compared (the rest is cut, and noted)."""
SHOWN_PAIRS = 20
"""How many of the top pairs the page shows side by side."""


@dataclass
class Submission:
    student: str
    code: str                 # the exercise cells, in notebook order
    fingerprint: CodeFingerprint | None
    note: str = ""            # why it was not compared, or what was cut


@dataclass
class Pair:
    a: str
    b: str
    similarity_a: float       # share of a's fingerprinted tokens found in b
    similarity_b: float
    tokens: int               # overlapping tokens
    slices_a: np.ndarray      # 2 x N: starts and ends of the matching regions in a's code
    slices_b: np.ndarray

    @property
    def score(self) -> float:
        return (self.similarity_a + self.similarity_b) / 2


@dataclass
class SimilarityReport:
    lab: str
    title: str
    submissions: dict[str, Submission]
    pairs: list[Pair]         # highest score first
    seconds: float
    language: str = "en"
    skipped: list[Submission] = field(default_factory=list)


def exercise_code(nb) -> str:
    """The exercise cells of a notebook joined in notebook order (other cells are ignored)."""
    return "\n\n".join(cell.source for cell in exercise_cells(nb))


def _fingerprint(student: str, code: str, boilerplate) -> CodeFingerprint:
    return CodeFingerprint(f"{student}.py", NOISE_TOKENS, WINDOW, boilerplate=boilerplate,
                           language="python", fp=io.StringIO(code))


def boilerplate_hashes(lab: LabSpec) -> np.ndarray:
    """Every k-gram hash of the released exercise cells: code all students were given.

    The English release serves both editions: the Chinese one's exercise cells differ only
    in string literals, and the tokenizer reads every string as one token."""
    code = exercise_code(release_notebook(lab))
    return np.array(sorted(CodeFingerprint("release.py", NOISE_TOKENS, 1, language="python",
                                           fp=io.StringIO(code)).hashes), dtype=np.int64)


def read_submissions(paths: list[Path], boilerplate, names: dict[Path, str]) -> tuple[dict, list]:
    """Each readable submission, fingerprinted; the unreadable or empty ones apart."""
    kept, skipped = {}, []
    for path in paths:
        student = names.get(path, path.stem)
        nb, notes = read_submission(path)
        if nb is None:
            skipped.append(Submission(student, "", None, "; ".join(notes)))
            continue
        code = exercise_code(nb)
        note = ""
        if len(code) > MAX_CODE_CHARS:
            code, note = code[:MAX_CODE_CHARS], f"cut to {MAX_CODE_CHARS} characters"
        fingerprint = _fingerprint(student, code, boilerplate)
        if fingerprint.token_coverage == 0:
            skipped.append(Submission(student, code, None, "no code beyond the starter code"))
            continue
        kept[student] = Submission(student, code, fingerprint, note)
    return kept, skipped


def compare_all(submissions: dict[str, Submission]) -> list[Pair]:
    """Every pair that shares at least one region, highest score first."""
    pairs = []
    for a, b in itertools.combinations(sorted(submissions), 2):
        tokens, (sim_a, sim_b), (slices_a, slices_b) = compare_files(
            submissions[a].fingerprint, submissions[b].fingerprint)
        if tokens > 0:
            pairs.append(Pair(a, b, float(sim_a), float(sim_b), int(tokens),
                              np.asarray(slices_a, dtype=int), np.asarray(slices_b, dtype=int)))
    return sorted(pairs, key=lambda p: (-p.score, -p.tokens, p.a, p.b))


def similarity_report(lab: LabSpec, paths: list[Path], language: str = "en", *,
                      names: dict[Path, str] | None = None) -> SimilarityReport:
    """Fingerprint ``paths`` (submissions of ``lab``) without running them and rank every
    pair; ``language`` is the page's. ``names`` gives the name shown for a path (default:
    the file name without ``.ipynb``), as a term's per-student attempt folders need."""
    start = time.perf_counter()
    submissions, skipped = read_submissions(sorted(paths), boilerplate_hashes(lab), names or {})
    pairs = compare_all(submissions)
    return SimilarityReport(lab.id, lab.title, submissions, pairs,
                            time.perf_counter() - start, language, skipped)


# ---------------------------------------------------------------------------- rendering

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 1400px; padding: 0 1rem; color: #1f2933; line-height: 1.45; }
.caution { background: #fff8c5; border-left: 4px solid #9a6700; padding: .6rem .9rem; }
table.ranking { border-collapse: collapse; font-size: .92rem; }
table.ranking th, table.ranking td { border: 1px solid #d9e2ec; padding: .25rem .6rem; }
table.ranking th { background: #f0f4f8; } td.num { text-align: right; }
.pair { margin: 2rem 0; } .sides { display: flex; gap: 1rem; }
.side { flex: 1 1 0; min-width: 0; }
.side pre { background: #f5f7fa; padding: .5rem; overflow: auto; max-height: 40rem;
            font-size: .8rem; white-space: pre; }
mark { background: #ffd7a8; }
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'"
"""No script runs and nothing is fetched: the page is text, tables and marks."""


def marked(code: str, slices: np.ndarray) -> str:
    """``code`` escaped, with each ``[start, end)`` region of ``slices`` inside ``<mark>``."""
    parts, last = [], 0
    for start, end in sorted(zip(slices[0].tolist(), slices[1].tolist(), strict=True)):
        start, end = max(start, last), min(end, len(code))
        if end <= start:
            continue
        parts += [html.escape(code[last:start]), "<mark>", html.escape(code[start:end]),
                  "</mark>"]
        last = end
    parts.append(html.escape(code[last:]))
    return "".join(parts)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _ranking(r: SimilarityReport) -> str:
    s = lambda key, **f: html.escape(say(r.language, key, **f))  # noqa: E731
    head = "".join(f"<th scope='col'>{s(k)}</th>" for k in
                   ("sim_col_rank", "sim_col_a", "sim_col_b", "sim_col_score", "sim_col_of_a",
                    "sim_col_of_b", "sim_col_tokens"))
    rows = []
    for rank, p in enumerate(r.pairs, 1):
        link = (f"<a href='#pair-{rank}'>{rank}</a>" if rank <= SHOWN_PAIRS else str(rank))
        rows.append(f"<tr><td class='num'>{link}</td><td>{html.escape(p.a)}</td>"
                    f"<td>{html.escape(p.b)}</td><td class='num'>{_pct(p.score)}</td>"
                    f"<td class='num'>{_pct(p.similarity_a)}</td>"
                    f"<td class='num'>{_pct(p.similarity_b)}</td>"
                    f"<td class='num'>{p.tokens}</td></tr>")
    return (f"<table class='ranking'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _pair(r: SimilarityReport, rank: int, p: Pair) -> str:
    sides = []
    for student, slices, share in ((p.a, p.slices_a, p.similarity_a),
                                   (p.b, p.slices_b, p.similarity_b)):
        title = say(r.language, "sim_side", student=student, pct=_pct(share))
        sides.append(f"<div class='side'><h3>{html.escape(title)}</h3>"
                     f"<pre>{marked(r.submissions[student].code, slices)}</pre></div>")
    head = say(r.language, "sim_pair", rank=rank, a=p.a, b=p.b, pct=_pct(p.score))
    return (f"<section class='pair' id='pair-{rank}'><h2>{html.escape(head)}</h2>"
            f"<div class='sides'>{''.join(sides)}</div></section>")


def page_html(r: SimilarityReport) -> str:
    """The report as one self-contained HTML page in ``r.language``."""
    s = lambda key, **f: html.escape(say(r.language, key, **f))  # noqa: E731
    title = say(r.language, "sim_title", title=r.title)
    skipped = "".join(f"<li>{html.escape(sub.student)}: {html.escape(sub.note)}</li>"
                      for sub in r.skipped)
    return "\n".join([
        "<!doctype html>",
        f"<html lang='{'zh-CN' if r.language == 'zh' else 'en'}'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='caution'>{s('sim_caution')}</p>",
        f"<p>{s('sim_method', k=NOISE_TOKENS)}</p>",
        "<p>" + s("sim_meta", lab=r.lab, count=len(r.submissions), pairs=len(r.pairs),
                  seconds=f"{r.seconds:.1f}", when=time.strftime("%Y-%m-%d %H:%M")) + "</p>",
        (f"<p>{s('sim_skipped')}</p><ul>{skipped}</ul>" if skipped else ""),
        f"<h2>{s('sim_h_ranking')}</h2>",
        _ranking(r) if r.pairs else f"<p>{s('sim_no_pairs')}</p>",
        *(_pair(r, rank, p) for rank, p in enumerate(r.pairs[:SHOWN_PAIRS], 1)),
        "</body></html>"])


def write_page(report: SimilarityReport, out: Path | str) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page_html(report), encoding="utf-8")
    return out
