"""Self-check inside the learner's notebook: ``check("exercise_id")`` and ``check_all()``.

Runs the exercise's PUBLIC cases against the learner's live function, in the
learner's own kernel (no sandbox: it is their code on their machine), and shows
a compact table: pass/fail per case, the input, expected vs got (summarised by
:func:`autograder.summarize.brief`, mismatching array elements highlighted or
named with their indices), and the first tier of the exercise's hints;
``check(id, hint=2)`` shows tiers 1 and 2, and so on. Grading also runs hidden
cases, so passing here is necessary, not sufficient; the table says so.

Values go through the same :mod:`autograder.codec` round trip and the same
:func:`autograder.compare.compare` as in grading, so "passes here" and "passes
when graded" agree on the public cases. A stub that still raises
``NotImplementedError`` is reported as "not attempted", not as a crash.

Where the cases come from, first match wins: the ``lab`` argument (a lab id or a
directory with ``spec.py``); ``spec.py`` in the current directory;
``public_cases.json`` in the current directory (what ``release`` writes next to
the student notebook); every ``labs/*/spec.py`` of the installed course, then
every ``chapters/practice/*/spec.py`` (the chapters' ungraded practice, whose
cases are all public).

The report speaks the notebook's language (the tables in
:mod:`autograder.messages`; hint tiers from the exercise's ``hints_zh``, the
English ones where it has none). First match wins: the ``lang`` argument;
the course's language choice (:mod:`chapters.language`: ``set_language``, the
``COURSE_LANG`` environment variable, a notebook path in a ``zh`` folder or
named ``*.zh.ipynb``), shared with the figures; the notebook the kernel runs,
whose path Jupyter puts in the ``JPY_SESSION_NAME`` environment variable, when its metadata names a
language (the Chinese chapters and lab sources carry ``course_edition.language``,
a released notebook ``autograder.language``); ``./public_cases.json``'s
``language`` (the Chinese release writes ``"zh-CN"``); English.
"""

from __future__ import annotations

import functools
import html
import json
import linecache
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import chapters
import labs
from chapters.language import chosen_language, notebook_path

from . import codec
from .cell_lint import cell_warnings
from .compare import compare
from .messages import language_of, message, metadata_language
from .spec import PUBLIC_CASES, load_lab
from .summarize import brief, clip, difference

STATUS_COLOR = {"passed": "#1a7f37", "failed": "#cf222e", "error": "#cf222e",
                "not_attempted": "#9a6700", "missing": "#9a6700"}
VALUE_CHARS = 120
"""How long an expected or returned value may be, as text, in a report."""
ARGS_CHARS = 200
"""How long a case's inputs may be, as text, in a report."""


@dataclass
class PublicExercise:
    id: str
    function: str
    compare: object
    rtol: float
    atol: float
    hints: tuple[str, ...]
    hidden_cases: int
    cases: list[tuple[str, tuple, dict, object]]   # name, args, kwargs, expected
    lab: str = ""
    hints_zh: tuple[str, ...] = ()
    forbid_imports: tuple[str, ...] = ()

    def hints_in(self, language: str) -> tuple[str, ...]:
        """The hint tiers in ``language``; English where there is no translation."""
        return self.hints_zh if language == "zh" and self.hints_zh else self.hints


@dataclass
class CaseResult:
    name: str
    status: str
    args: tuple
    kwargs: dict
    expected: object
    got: object = None
    message: str = ""
    mask: np.ndarray | None = None


@dataclass
class CheckReport:
    """The public cases' results; ``hint_level`` is what ``check(id, hint=...)`` asked for
    (``None``: tier 1 if something fails, nothing if all pass); ``language`` is the
    report's, a key of :data:`autograder.messages.MESSAGES`."""

    exercise: PublicExercise
    results: list[CaseResult] = field(default_factory=list)
    hint_level: int | None = None
    language: str = "en"
    warnings: list[str] = field(default_factory=list)   # what grading will charge the cell for

    def say(self, key: str, **fields) -> str:
        """The message ``key`` in the report's language."""
        return message(self.language, key, **fields)

    @property
    def passed(self) -> int:
        return sum(r.status == "passed" for r in self.results)

    @property
    def status(self) -> str:
        statuses = {r.status for r in self.results}
        if statuses == {"passed"}:
            return "passed"
        if statuses <= {"not_attempted"}:
            return "not_attempted"
        return "failed"

    def headline(self) -> str:
        ex = self.exercise
        fields = {"id": ex.id, "passed": self.passed, "total": len(self.results),
                  "word": self.say(f"word_{self.status}"), "hidden": ex.hidden_cases}
        return self.say("headline_hidden" if ex.hidden_cases else "headline", **fields)

    def hints(self) -> list[tuple[str, str]]:
        """The hint tiers to show, each as (label, text): tiers 1..hint_level."""
        tiers = self.exercise.hints_in(self.language)
        if self.hint_level is None:
            level = 1 if self.status != "passed" else 0
        else:
            level = max(1, min(self.hint_level, len(tiers)))
        return [(self.say("hint") if len(tiers) == 1 else self.say("hint_of", k=k, n=len(tiers)),
                 tiers[k - 1]) for k in range(1, min(level, len(tiers)) + 1)]

    def more_help(self) -> str:
        """The call that shows one more hint tier ("" when every tier is shown or none is)."""
        shown = len(self.hints())
        if not shown or shown >= len(self.exercise.hints):
            return ""
        return f"check({self.exercise.id!r}, hint={shown + 1})"

    def to_text(self) -> str:
        lines = [self.headline()] + [f"  ! {w}" for w in self.warnings]
        wrong = [r for r in self.results if r.status in ("failed", "error")]
        for r in self.results:
            lines += _case_lines(self, r, detailed=bool(wrong) and r is wrong[0])
        colon = self.say("colon")
        lines += [f"  {label}{colon}{text}" for label, text in self.hints()]
        if self.more_help():
            lines.append(f"  {self.say('more_help_text')}{colon}{self.more_help()}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return report_html([self])

    def __repr__(self) -> str:
        return self.to_text()


def _load_public(exercise_id: str, lab=None, language: str = "en") -> PublicExercise:
    if lab is None and Path("spec.py").is_file():
        try:
            return _from_spec(load_lab(Path(".")), exercise_id)
        except KeyError:
            pass
    if lab is not None:
        return _from_spec(load_lab(lab), exercise_id)
    public = Path(PUBLIC_CASES)
    if public.is_file():
        found = _from_public_json(json.loads(public.read_text()), exercise_id)
        if found is not None:
            return found
    for specs in (_practice_specs, _lab_specs):  # practice first: it imports no lab
        matches = [spec for spec in specs() if any(ex.id == exercise_id for ex in spec.exercises)]
        if matches:
            break
    if len(matches) == 1:
        return _from_spec(matches[0], exercise_id)
    if matches:
        raise LookupError(message(language, "in_several_labs", id=exercise_id,
                                  labs=[m.id for m in matches]))
    raise LookupError(message(language, "no_such_exercise", id=exercise_id,
                              public=PUBLIC_CASES))


def _labs_dir() -> Path:
    return Path(labs.__file__).parent


def _practice_dir() -> Path:
    return Path(chapters.__file__).parent / "practice"


def _practice_specs() -> list:
    return [load_lab(f.parent) for f in sorted(_practice_dir().glob("*/spec.py"))]


def _lab_specs() -> list:
    return [load_lab(f.parent.name) for f in sorted(_labs_dir().glob("*/spec.py"))]


def _installed_specs() -> list:
    """The chapters' practice specs and the course's lab specs (their ids are disjoint;
    a test makes sure)."""
    return _practice_specs() + _lab_specs()


def _from_spec(spec, exercise_id: str) -> PublicExercise:
    ex = spec.exercise(exercise_id)
    cases = []
    for case in ex.public_cases:
        args, kwargs = codec.decode(codec.encode((tuple(case.args), dict(case.kwargs))))
        cases.append((case.name, tuple(case.args), dict(case.kwargs),
                      codec.loads(codec.dumps(ex.reference(*args, **kwargs)))))
    return PublicExercise(ex.id, ex.function, ex.compare, ex.rtol, ex.atol, ex.hints,
                          len(ex.hidden_cases), cases, spec.id, ex.hints_zh,
                          tuple(ex.forbid_imports))


def _from_public_json(data: dict, exercise_id: str) -> PublicExercise | None:
    for ex in data.get("exercises", []):
        if ex["id"] == exercise_id:
            compare_mode = ex["compare"] if ex["compare"] != "custom" else "allclose"
            cases = [(c["name"], codec.decode(c["args"]), codec.decode(c["kwargs"]),
                      codec.decode(c["expected"])) for c in ex["cases"]]
            hints = ex.get("hints") or ([ex["hint"]] if ex.get("hint") else [])
            in_chinese = metadata_language(data) == "zh"
            return PublicExercise(ex["id"], ex["function"], compare_mode, ex["rtol"], ex["atol"],
                                  tuple(hints), ex["hidden_cases"], cases, data.get("lab", ""),
                                  tuple(hints) if in_chinese else (),
                                  tuple(ex.get("forbid_imports", ())))
    return None


def _namespace(namespace):
    if namespace is not None:
        return namespace
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        return shell.user_ns
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("autograder"):
        frame = frame.f_back
    return frame.f_globals if frame is not None else {}


def _session_notebook(namespace: dict) -> Path | None:
    """The notebook this kernel runs, from the path Jupyter gives it (absolute, or
    relative to the server's root, so also tried next to the working directory)."""
    name = notebook_path(namespace)
    if not name or not str(name).endswith(".ipynb"):
        return None
    for path in (Path(name), Path.cwd() / Path(name).name):
        if path.is_file():
            return path
    return None


def _notebook_language(namespace: dict) -> str | None:
    path = _session_notebook(namespace)
    if path is None:
        return None
    try:
        return _saved_notebook_language(str(path), path.stat().st_mtime_ns)
    except OSError:
        return None


@functools.lru_cache(maxsize=8)
def _saved_notebook_language(path: str, mtime_ns: int) -> str | None:
    """The language in a saved notebook's metadata; cached per version of the file
    (``mtime_ns``), since a notebook saved with its figures can be megabytes."""
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
        return metadata_language(notebook.get("metadata", {}))
    except (OSError, ValueError, AttributeError):
        return None   # unreadable or foreign: the next source of the language decides


def _public_cases_language() -> str | None:
    public = Path(PUBLIC_CASES)
    if not public.is_file():
        return None
    try:
        return metadata_language(json.loads(public.read_text()))
    except (OSError, ValueError, AttributeError):
        return None


def report_language(lang: str | None = None, namespace: dict | None = None) -> str:
    """The language a report is shown in (see the module's docstring for the order)."""
    if lang is not None:
        return language_of(lang)
    return (chosen_language() or _notebook_language(namespace or {})
            or _public_cases_language() or "en")


def run_check(exercise_id: str, lab=None, namespace=None, hint: int | None = None,
              lang: str | None = None) -> CheckReport:
    """Run the public cases of ``exercise_id``; return the report (displays nothing).

    ``hint`` asks for hint tiers 1..hint (see :meth:`CheckReport.hints`); ``lang``
    (``"zh"`` or ``"en"``) overrides the language the notebook implies."""
    namespace = _namespace(namespace)
    language = report_language(lang, namespace)
    ex = _load_public(exercise_id, lab, language)
    function = namespace.get(ex.function)
    report = CheckReport(ex, hint_level=None if hint is None else int(hint), language=language)
    source = _defining_cell(function)
    if source is not None:
        report.warnings = cell_warnings(source, ex.forbid_imports, language)
    say = report.say
    for name, args, kwargs, expected in ex.cases:
        result = CaseResult(name, "passed", args, kwargs, expected)
        report.results.append(result)
        if not callable(function):
            result.status = "missing"
            result.message = say("missing_message", function=ex.function)
            continue
        call_args, call_kwargs = codec.decode(codec.encode((tuple(args), dict(kwargs))))
        try:
            value = function(*call_args, **call_kwargs)
        except NotImplementedError:
            result.status, result.message = "not_attempted", say("not_attempted_message")
            continue
        except Exception as err:
            frames = traceback.extract_tb(err.__traceback__)[1:]
            where = (say("raised_where", line=frames[-1].lineno, name=frames[-1].name)
                     if frames else "")
            result.status = "error"
            result.message = say("raised", kind=type(err).__name__, error=err, where=where)
            continue
        try:
            result.got = codec.loads(codec.dumps(value))
        except codec.CodecError as err:
            result.status, result.got = "error", value
            result.message = say("not_receivable", error=err)
            continue
        outcome = compare(expected, result.got, ex.compare, ex.rtol, ex.atol, language)
        if not outcome.ok:
            result.status, result.mask = "failed", outcome.mask
            result.message = difference(ex.compare, ex.rtol, ex.atol, expected, result.got,
                                        outcome.message, language)
    return report


def _defining_cell(function) -> str | None:
    """The whole source of the cell that defined ``function``, top level included: IPython
    compiles each cell under a file name of its own and keeps its lines in linecache."""
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    lines = linecache.getlines(code.co_filename)
    return "".join(lines) if lines else None


def _case_lines(report: CheckReport, r: CaseResult, detailed: bool) -> list[str]:
    """A case in the text report: its status and message, then, if ``detailed`` (the
    first case that went wrong), the input, the expected value and what came back."""
    lines = [f"  [{report.say(r.status)}] {r.name}: {r.message}".rstrip(": ")]
    if detailed:
        lines.append(f"      {report.say('input')} {_args_text(r.args, r.kwargs)}")
        lines.append(f"      {report.say('expected')} {brief(r.expected, VALUE_CHARS)}")
    if detailed and r.status == "failed":
        lines.append(f"      {report.say('got')} {brief(r.got, VALUE_CHARS)}")
    return lines


def _element(v) -> str:
    v = v.item() if isinstance(v, np.generic) else v
    return f"{v:.6g}" if isinstance(v, float) else repr(v)


def _cell(value, mask=None, limit=VALUE_CHARS) -> str:
    """HTML for a value; array elements under ``mask`` are highlighted."""
    if isinstance(value, np.ndarray) and mask is not None and mask.shape == value.shape \
            and value.ndim in (1, 2) and value.size <= 64:
        rows = value.reshape(1, -1) if value.ndim == 1 else value
        bad = mask.reshape(rows.shape)
        marked = "background:#ffd7d5;font-weight:bold"
        body = "".join(
            "<tr>" + "".join(f'<td style="padding:1px 4px;{marked if b else ""}">'
                             f"{html.escape(_element(v))}</td>"
                             for v, b in zip(row, brow, strict=True)) + "</tr>"
            for row, brow in zip(rows, bad, strict=True))
        return f'<table style="border-collapse:collapse;font-family:monospace">{body}</table>'
    return f"<code>{html.escape(brief(value, limit))}</code>"


def _args_text(args, kwargs, limit=ARGS_CHARS) -> str:
    """The inputs as ``brief`` texts, each given a fair share of ``limit``."""
    each = max(limit // max(len(args) + len(kwargs), 1), 24)
    parts = [brief(a, each) for a in args] + [f"{k}={brief(v, each)}" for k, v in kwargs.items()]
    return clip(", ".join(parts), limit)


def _hints_html(report: CheckReport) -> str:
    colon = report.say("colon")
    label_end = html.escape(colon.rstrip())   # the English space goes after the </b>
    gap = colon[len(colon.rstrip()):]
    tiers = "".join(f'<div style="margin-top:4px"><b>{html.escape(label)}{label_end}</b>{gap}'
                    f"{html.escape(text)}</div>" for label, text in report.hints())
    more = (f'<div style="margin-top:2px;color:#57606a">{report.say("more_help_html")}{colon}'
            f"<code>{html.escape(report.more_help())}</code></div>" if report.more_help() else "")
    return tiers + more


def _warnings_html(report: CheckReport) -> str:
    return "".join(f'<div style="color:#9a6700">&#9888; {html.escape(w)}</div>'
                   for w in report.warnings)


def _header_html(report: CheckReport) -> str:
    columns = ("result", "case", "input", "expected", "got", "message")
    return "".join(f"<th>{html.escape(report.say('col_' + c))}</th>" for c in columns)


def report_html(reports: list[CheckReport]) -> str:
    blocks = []
    for report in reports:
        rows = []
        for r in report.results:
            color, label = STATUS_COLOR[r.status], report.say(r.status)
            detail = html.escape(r.message)
            if r.status == "failed":
                detail = f'<span style="color:#cf222e">{detail}</span>'
            rows.append(
                f'<tr><td style="color:{color};font-weight:bold">{label}</td>'
                f"<td>{html.escape(r.name)}</td>"
                f"<td><code>{html.escape(_args_text(r.args, r.kwargs))}</code></td>"
                f"<td>{_cell(r.expected, r.mask)}</td>"
                f"<td>{_cell(r.got, r.mask) if r.status in ('passed', 'failed') else ''}</td>"
                f"<td>{detail}</td></tr>")
        blocks.append(
            f'<div class="autograder-check" style="margin:6px 0">'
            f"<div><b>{html.escape(report.headline())}</b></div>{_warnings_html(report)}"
            '<table style="border-collapse:collapse;font-size:90%">'
            f"<tr>{_header_html(report)}</tr>{''.join(rows)}</table>{_hints_html(report)}</div>")
    return "".join(blocks)


def _show(reports: list[CheckReport], summary: str | None = None) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import HTML, display
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        head = f"<div><b>{html.escape(summary)}</b></div>" if summary else ""
        display(HTML(head + report_html(reports)))
    else:
        if summary:
            print(summary)
        for report in reports:
            print(report.to_text())


def check(exercise_id: str, lab=None, hint: int | None = None, lang: str | None = None) -> None:
    """Run and show the public cases of one exercise; ``hint=2`` shows hint tiers 1 and 2;
    ``lang="zh"`` reports in Chinese whatever the notebook's language."""
    _show([run_check(exercise_id, lab, _namespace(None), hint, lang)])


def run_check_all(lab=None, namespace=None, lang: str | None = None) -> list[CheckReport]:
    """Reports for every exercise of the lab (by default: the lab in ./spec.py or
    ./public_cases.json, or the lab whose functions this namespace defines)."""
    namespace = _namespace(namespace)
    ids = _exercise_ids(lab, namespace, report_language(lang, namespace))
    return [run_check(eid, lab, namespace, lang=lang) for eid in ids]


def _exercise_ids(lab, namespace, language: str = "en") -> list[str]:
    if lab is not None:
        return [ex.id for ex in load_lab(lab).exercises]
    if Path("spec.py").is_file():
        return [ex.id for ex in load_lab(Path(".")).exercises]
    if Path(PUBLIC_CASES).is_file():
        return [ex["id"] for ex in json.loads(Path(PUBLIC_CASES).read_text())["exercises"]]
    best, best_hits = None, 0
    for spec in _lab_specs():
        hits = sum(callable(namespace.get(ex.function)) for ex in spec.exercises)
        if hits > best_hits:
            best, best_hits = spec, hits
    if best is None:
        raise LookupError(message(language, "which_lab"))
    return [ex.id for ex in best.exercises]


def check_all(lab=None, lang: str | None = None) -> None:
    """Run and show the public cases of every exercise, with a summary line."""
    namespace = _namespace(None)
    reports = run_check_all(lab, namespace, lang)
    done = sum(r.status == "passed" for r in reports)
    language = report_language(lang, namespace)
    _show(reports, message(language, "summary", done=done, total=len(reports)))
