"""Grading submissions: one sandbox per submission x exercise, scores into the gradebook.

For each submitted notebook the grader (trusted) takes the support code from the
lab's *source* notebook and the exercise cells from the submission (matched by
the ``exercise.id`` in their metadata; other cells are ignored), and starts one
sandbox (:mod:`autograder.sandbox`) in which each exercise gets its own child
process that runs the code and calls the exercise's function on every case's
inputs. The expected values are
computed here, once per batch, by the spec's references; the sandbox never sees
them. Each returned value is compared (:mod:`autograder.compare`) and scored:

``score(exercise) = points(exercise) * sum(points of passed cases) / sum(points of all cases)``

Case statuses: ``passed``, ``failed`` (wrong value), ``error`` (raised, or returned
something that cannot be sent back), ``not_attempted`` (the release stub's
``NotImplementedError``), ``timeout``, ``crashed`` (the process died),
``forbidden_import`` (the exercise scores 0), ``missing`` (no exercise cell),
``too_large`` (the returned value is over the size caps), ``invalid_submission``
(the file is not a readable notebook), ``grader_error`` (the grader itself failed
on this submission: the case scores 0 and the log says why).

A hidden case is recorded as its name, outcome and, for an error, the exception
class when it is a built-in one: never the submission's message, printed output,
returned value or the expected value, since all of those can carry the hidden
input back to the student.

The grader's own words (a case's message, an exercise's notes) are in the
submission's language: the one its notebook's metadata names (a lab released
with ``--lang zh`` says ``autograder.language = "zh"``), English otherwise
(:func:`submission_language`). The exported feedback, the Gradescope results
and the class report then speak it too, since the gradebook keeps it.
"""

from __future__ import annotations

import builtins
import hashlib
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from . import codec
from .cell_lint import cell_warnings, forbidden_in_source
from .compare import compare
from .dependencies import calls_into_broken
from .gradebook import Gradebook
from .messages import message, metadata_language
from .notebook import (
    exercise_cells,
    exercise_points,
    read_notebook,
    read_submission,
    support_sources,
)
from .sandbox import Job, Limits, encode_cases, run_submission
from .spec import Exercise, LabSpec
from .summarize import brief, difference

DETAIL_CHARS = 300
STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,99}$")


class GraderError(RuntimeError):
    """The grader itself failed (a bad spec, a failing reference): not the student's fault."""


@dataclass
class CaseGrade:
    name: str
    hidden: bool
    status: str
    score: float
    max_score: float
    message: str = ""
    seconds: float = 0.0
    detail: dict | None = None
    error_type: str = ""


@dataclass
class ExerciseGrade:
    exercise: str
    score: float
    max_score: float
    status: str
    message: str
    cases: list[CaseGrade]
    code_hash: str = ""
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    crashed: bool = False
    sandbox_notes: list[str] = field(default_factory=list)


@dataclass
class SubmissionGrade:
    student: str
    path: str
    file_hash: str
    fingerprint: str
    exercises: list[ExerciseGrade]
    notes: list[str] = field(default_factory=list)
    status: str = "graded"
    language: str = "en"

    @property
    def score(self) -> float:
        return sum(e.score for e in self.exercises)

    @property
    def max_score(self) -> float:
        return sum(e.max_score for e in self.exercises)


@dataclass
class Plan:
    """Everything about a lab the grader needs, computed once per batch."""

    lab: LabSpec
    points: dict[str, float]
    support: list[str]
    expected: dict[str, list]
    fingerprint: str
    time_limit: float | None = None
    memory_mb: int = 1024
    isolate: bool = True
    inputs: dict[str, list] = field(default_factory=dict)   # encoded once for every sandbox

    def wall_s(self, exercise: Exercise) -> float:
        return self.time_limit or exercise.timeout_s

    def limits(self) -> Limits:
        shortest = min(self.wall_s(ex) for ex in self.lab.exercises)
        return Limits(memory_mb=self.memory_mb, other_cell_s=min(2.0, max(0.5, shortest / 4)),
                      isolate=self.isolate)


BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, BaseException))


def safe_error_type(name: str, language: str = "en") -> str:
    """The exception class a hidden case may report: a built-in one by name, any
    other as "an exception class of its own" (its name is the submission's choice)."""
    if not name:
        return ""
    return name if name in BUILTIN_EXCEPTIONS else message(language, "grade_own_class")


def submission_language(nb) -> str:
    """The language a submitted notebook's metadata names (``autograder.language``,
    written by ``release --lang``); English when it names none or one the grader
    does not speak."""
    try:
        return metadata_language(dict(nb.get("metadata") or {})) or "en"
    except (ValueError, TypeError, AttributeError):
        return "en"


def prepare(lab: LabSpec, time_limit: float | None = None, memory_mb: int = 1024,
            isolate: bool = True) -> Plan:
    """Validate the lab, read its source notebook and compute every expected value."""
    lab.validate()
    source = read_notebook(lab.source)
    points = exercise_points(source)
    missing = [ex.id for ex in lab.exercises if ex.id not in points]
    if missing:
        raise GraderError(f"lab {lab.id}: the source notebook {lab.source} has no exercise cell "
                          f"for {missing}")
    digest = hashlib.sha256(Path(lab.source).read_bytes())
    expected: dict[str, list] = {}
    for ex in lab.exercises:
        values = []
        for case in ex.cases:
            args, kwargs = codec.decode(codec.encode((tuple(case.args), dict(case.kwargs))))
            try:
                value = ex.reference(*args, **kwargs)
                encoded = codec.dumps(value)
            except Exception as err:
                raise GraderError(f"lab {lab.id}, exercise {ex.id}, case {case.name}: the "
                                  f"reference failed: {type(err).__name__}: {err}") from err
            values.append(codec.loads(encoded))
            digest.update(f"{ex.id}|{case.name}|{case.hidden}|{case.points}|".encode())
            digest.update(codec.dumps((tuple(case.args), dict(case.kwargs))).encode())
            digest.update(encoded.encode())
        compare_name = ex.compare if isinstance(ex.compare, str) else ex.compare.__qualname__
        digest.update(f"{ex.function}|{compare_name}|{ex.rtol}|{ex.atol}|{ex.forbid_imports}|"
                      f"{points[ex.id]}".encode())
        expected[ex.id] = values
    inputs = {ex.id: encode_cases([(c.args, c.kwargs) for c in ex.cases]) for ex in lab.exercises}
    return Plan(lab, points, support_sources(source), expected, digest.hexdigest()[:16],
                time_limit, memory_mb, isolate, inputs)


def runnable_source(source: str) -> str:
    """Comment out IPython magics and shell escapes (``%time``, ``!ls``): not Python."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            line = line[: len(line) - len(stripped)] + "pass  # " + stripped
        lines.append(line)
    return "\n".join(lines)


def _invalid(plan: Plan, status: str, text: str) -> list[ExerciseGrade]:
    grades = []
    for ex in plan.lab.exercises:
        cases = [CaseGrade(c.name, c.hidden, status, 0.0, _case_max(plan, ex, c), text)
                 for c in ex.cases]
        grades.append(ExerciseGrade(ex.id, 0.0, plan.points[ex.id], status, text, cases))
    return grades


def _case_max(plan: Plan, ex: Exercise, case) -> float:
    return plan.points[ex.id] * case.points / ex.case_points


def _code_hash(own: list[dict]) -> str:
    return hashlib.sha256("\n".join(c["source"] for c in own).encode()).hexdigest()[:16]


def _without_run(plan: Plan, ex: Exercise, cells: list[dict],
                 language: str) -> ExerciseGrade | None:
    """The grade of an exercise that need not run: its cell is missing, or it
    imports a forbidden module by name. ``None`` if it must run."""
    own = [c for c in cells if c["exercise"] == ex.id]
    if not own:
        text = message(language, "grade_missing_cell", id=ex.id)
        status = "missing"
    else:
        banned = sorted({m for c in own for m in forbidden_in_source(c["source"],
                                                                     ex.forbid_imports)})
        if not banned:
            return None
        text = message(language, "grade_forbidden_by_name", banned=", ".join(banned),
                       forbidden=", ".join(ex.forbid_imports))
        status = "forbidden_import"
    cases = [CaseGrade(c.name, c.hidden, status, 0.0, _case_max(plan, ex, c), text)
             for c in ex.cases]
    return ExerciseGrade(ex.id, 0.0, plan.points[ex.id], status, text, cases, _code_hash(own))


def grade_exercises(plan: Plan, cells: list[dict], language: str = "en") -> list[ExerciseGrade]:
    """Grade every exercise of one submission (``cells``: its exercise cells), running
    those that need it in one sandbox; the grader's messages are in ``language``."""
    grades: dict[str, ExerciseGrade] = {}
    to_run = []
    for ex in plan.lab.exercises:
        fixed = _without_run(plan, ex, cells, language)
        if fixed is not None:
            grades[ex.id] = fixed
        else:
            to_run.append(ex)
    if to_run:
        jobs = [Job(ex.id, ex.function, plan.inputs[ex.id], tuple(ex.forbid_imports),
                    plan.wall_s(ex), tuple(c.hidden for c in ex.cases)) for ex in to_run]
        runs = run_submission(cells=cells, support=plan.support, jobs=jobs, limits=plan.limits(),
                              language=language)
        for ex, run in zip(to_run, runs, strict=True):
            try:
                grades[ex.id] = _from_run(plan, ex, cells, run, language)
            except Exception as err:  # never lose the submission's row over one exercise
                grades[ex.id] = _grader_error(plan, ex, cells, err, language)
    return [grades[ex.id] for ex in plan.lab.exercises]


def _grader_error(plan: Plan, ex: Exercise, cells: list[dict], err: Exception,
                  language: str) -> ExerciseGrade:
    text = message(language, "grade_grader_failed", kind=type(err).__name__)
    cases = [CaseGrade(c.name, c.hidden, "grader_error", 0.0, _case_max(plan, ex, c), text)
             for c in ex.cases]
    own = [c for c in cells if c["exercise"] == ex.id]
    return ExerciseGrade(ex.id, 0.0, plan.points[ex.id], "grader_error", text, cases,
                         _code_hash(own))


def _from_run(plan: Plan, ex: Exercise, cells: list[dict], run, language: str) -> ExerciseGrade:
    own = [c for c in cells if c["exercise"] == ex.id]
    notes = []
    if len(own) > 1:
        notes.append(message(language, "grade_several_cells", id=ex.id, count=len(own)))
    own_errors = [e["error"] for e in run.cell_errors if e["own"]]
    forbidden = sorted(set(run.forbidden))
    cases = []
    for case, outcome, expected in zip(ex.cases, run.outcomes, plan.expected[ex.id], strict=True):
        cases.append(_grade_case(plan, ex, case, outcome, expected, own_errors, language))
    if own_errors:  # top-level code that does not finish costs its exercise
        text = message(language, "grade_own_cell_failed",
                       error=own_errors[0].strip().splitlines()[-1][:200])
        for c in cases:
            if c.status == "passed":
                c.status, c.score, c.message = "error", 0.0, text
    if forbidden:
        text = message(language, "grade_forbidden_run", banned=", ".join(forbidden))
        for c in cases:
            c.status, c.score, c.message = "forbidden_import", 0.0, text
        notes.insert(0, text)
    score = sum(c.score for c in cases)
    statuses = {c.status for c in cases}
    if forbidden:
        status = "forbidden_import"
    elif statuses == {"not_attempted"}:
        status = "not_attempted"
    elif statuses == {"passed"}:
        status = "passed"
    elif "timeout" in statuses:
        status = "timeout"
    elif statuses <= {"crashed"}:
        status = "crashed"
    else:
        status = "partial" if score > 0 else "failed"
    if own_errors:
        notes.append(message(language, "grade_cell_raised", error=own_errors[0].splitlines()[-1]))
    if status != "passed":  # say which other exercise's broken cell it depends on
        notes[0:0] = calls_into_broken(ex.id, cells, run, language)
    if own_errors or status in ("timeout", "crashed"):  # what in its own cell did it
        notes += [n for c in own for n in cell_warnings(c["source"], (), language)]
    notes += run.cell_notes
    return ExerciseGrade(ex.id, score, plan.points[ex.id], status, "\n".join(notes), cases,
                         _code_hash(own), run.stdout, run.stderr, run.total_s, run.timed_out,
                         all(c.status == "crashed" for c in cases), run.notes)


def _grade_case(plan, ex, case, outcome, expected, own_errors, language) -> CaseGrade:
    """Score one case; a hidden one keeps only its name, outcome and a safe error class."""
    try:
        grade = _grade_case_fully(plan, ex, case, outcome, expected, own_errors, language)
    except Exception as err:  # whatever came back, this case scores 0 with a reason
        grade = CaseGrade(case.name, case.hidden, "error", 0.0, _case_max(plan, ex, case),
                          message(language, "grade_unreadable_result", kind=type(err).__name__),
                          0.0, None)
    if case.hidden:
        grade.detail = None
        grade.error_type = safe_error_type(grade.error_type, language)
        grade.message = _hidden_message(grade, language)
    return grade


HIDDEN_OUTCOMES = ("failed", "error", "not_attempted", "timeout", "crashed", "too_large",
                   "forbidden_import", "missing")
"""Statuses a hidden case names in words (``hidden_<status>`` in autograder.messages)."""


def _hidden_message(grade: CaseGrade, language: str) -> str:
    """What a hidden case may say: the outcome, and the exception class for an error."""
    if grade.status == "passed":
        return ""
    if grade.status == "error" and grade.error_type:
        return message(language, "hidden_raised", kind=grade.error_type)
    if grade.status in HIDDEN_OUTCOMES:
        return message(language, f"hidden_{grade.status}")
    return grade.status


def _grade_case_fully(plan, ex, case, outcome, expected, own_errors, language) -> CaseGrade:
    max_score = _case_max(plan, ex, case)
    detail = None if case.hidden else {"args": brief(case.args, DETAIL_CHARS),
                                       "kwargs": brief(case.kwargs, DETAIL_CHARS),
                                       "expected": brief(expected, DETAIL_CHARS)}
    status, text = outcome.status, outcome.message
    if status == "returned":
        if detail is not None:
            detail["got"] = brief(outcome.value, DETAIL_CHARS)
        try:
            result = compare(expected, outcome.value, ex.compare, ex.rtol, ex.atol, language)
        except Exception as err:  # a custom compare choking on odd input: the value is wrong
            return CaseGrade(case.name, case.hidden, "failed", 0.0, max_score,
                             message(language, "grade_could_not_compare",
                                     kind=type(err).__name__, error=err),
                             outcome.seconds, detail)
        if result.ok:
            return CaseGrade(case.name, case.hidden, "passed", max_score, max_score, "",
                             outcome.seconds, detail)
        text = message(language, "grade_wrong") if case.hidden else message(
            language, "grade_wrong_because", difference=difference(
                ex.compare, ex.rtol, ex.atol, expected, outcome.value, result.message, language))
        return CaseGrade(case.name, case.hidden, "failed", 0.0, max_score, text,
                         outcome.seconds, detail)
    mapped = {"not_attempted": "not_attempted", "raised": "error", "unencodable": "error",
              "forbidden": "forbidden_import", "missing": "error", "timeout": "timeout",
              "crashed": "crashed", "too_large": "too_large"}[status]
    if status == "not_attempted":
        text = message(language, "grade_not_attempted")
    elif status == "missing" and own_errors:
        text = message(language, "grade_failed_before", function=ex.function,
                       error=own_errors[0])
    return CaseGrade(case.name, case.hidden, mapped, 0.0, max_score, text, outcome.seconds,
                     detail, outcome.error_type if mapped == "error" else "")


def student_id(path: Path, nb, id_from: str = "filename") -> str:
    if id_from == "metadata" and nb is not None:
        meta = (nb.get("metadata") or {}).get("autograder") or {}
        candidate = meta.get("student_id") if isinstance(meta, dict) else None
        if isinstance(candidate, str) and STUDENT_ID.match(candidate):
            return candidate
    stem = re.sub(r"[^A-Za-z0-9_.@+-]", "_", path.stem)[:100]
    return stem or "unnamed"


def grade_notebook(plan: Plan, path: Path, id_from: str = "filename") -> SubmissionGrade:
    """Grade one submitted notebook (never raises for anything the file contains)."""
    path = Path(path)
    try:
        file_hash = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        file_hash = ""
    nb, notes = read_submission(path)
    student = student_id(path, nb, id_from)
    if nb is None:
        return SubmissionGrade(student, str(path), file_hash, plan.fingerprint,
                               _invalid(plan, "invalid_submission", "; ".join(notes)), notes,
                               "invalid_submission")
    language = submission_language(nb)
    known = {ex.id for ex in plan.lab.exercises}
    cells = []
    for cell in exercise_cells(nb):
        if cell.exercise_id in known:
            cells.append({"index": cell.index, "exercise": cell.exercise_id,
                          "source": runnable_source(cell.source)})
        else:
            notes.append(message(language, "grade_unknown_exercise", index=cell.index,
                                 id=cell.exercise_id))
    exercises = grade_exercises(plan, cells, language)
    for ex in exercises:
        if ex.message:
            notes.append(f"{ex.exercise}: {ex.message}")
    status = "failed_to_run" if all(e.crashed for e in exercises) else "graded"
    return SubmissionGrade(student, str(path), file_hash, plan.fingerprint, exercises, notes,
                           status, language)


def submissions_in(directory: Path) -> list[Path]:
    directory = Path(directory)
    if directory.is_file():
        return [directory]
    if not directory.is_dir():
        raise GraderError(f"{directory} is not a directory of submissions")
    return sorted(p for p in directory.glob("*.ipynb") if p.is_file())


@dataclass
class BatchSummary:
    graded: int = 0
    skipped: int = 0
    failed_to_run: int = 0
    timed_out: int = 0
    grader_errors: int = 0
    seconds: float = 0.0
    grades: list[SubmissionGrade] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def counts(self) -> dict:
        return {"graded": self.graded, "skipped": self.skipped,
                "failed_to_run": self.failed_to_run, "timed_out": self.timed_out,
                "grader_errors": self.grader_errors}

    def line(self) -> str:
        return (f"graded {self.graded}, already up to date {self.skipped}, failed to run "
                f"{self.failed_to_run}, timed out {self.timed_out}, grader errors "
                f"{self.grader_errors} ({self.seconds:.1f} s)")


def grade_batch(plan: Plan, submissions: list[Path], gradebook: Gradebook, jobs: int = 1,
                force: bool = False, progress: bool = True,
                id_from: str = "filename") -> BatchSummary:
    """Grade ``submissions`` with ``jobs`` sandboxes at a time; record each as it finishes."""
    started_wall = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    start = time.perf_counter()
    summary = BatchSummary()
    lab_id = plan.lab.id
    todo, seen, sandbox_notes = [], {}, set()
    for path in submissions:
        nb, _ = read_submission(path)
        student = student_id(path, nb, id_from)
        if student in seen:
            summary.failed_to_run += 1
            summary.log.append(f"{path.name}: student id {student!r} already used by "
                               f"{seen[student].name}; not graded")
            continue
        seen[student] = path
        try:
            file_hash = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as err:
            summary.failed_to_run += 1
            summary.log.append(f"{path.name}: cannot be read ({err.strerror}); not graded")
            continue
        if not force and gradebook.is_current(lab_id, student, file_hash, plan.fingerprint):
            summary.skipped += 1
            continue
        todo.append(path)
    bar = tqdm(total=len(todo), desc=f"grading {lab_id}", unit="submission", disable=not progress,
               file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(grade_notebook, plan, p, id_from): p for p in todo}
        for future in as_completed(futures):
            path = futures[future]
            try:
                grade = future.result()
                gradebook.record(lab_id, grade)
            except Exception as err:
                summary.grader_errors += 1
                summary.log.append(f"{path.name}: grader error {type(err).__name__}: {err}")
            else:
                summary.grades.append(grade)
                summary.graded += 1
                if grade.status != "graded":
                    summary.failed_to_run += 1
                if any(e.timed_out for e in grade.exercises):
                    summary.timed_out += 1
                sandbox_notes.update(n for e in grade.exercises for n in e.sandbox_notes)
            bar.update(1)
    bar.close()
    summary.log += [f"sandbox: {n}" for n in sorted(sandbox_notes)]
    summary.seconds = time.perf_counter() - start
    summary.grades.sort(key=lambda g: g.student)
    gradebook.log_run(lab_id, started_wall, summary.counts(), "\n".join(summary.log))
    return summary
