"""The course file: one TOML file (read with :mod:`tomllib`) that says what a term is.

::

    [course]
    title = "Framework internals, autumn 2026"
    submissions = "submissions"          # folder of submissions/<lab>/..., beside this file
    gradebook = "build/grades/term.sqlite3"
    counts = "best"                      # the attempt that counts: "best" (after penalty), "latest"
    times = "manifest"                   # a submission's time comes from: "manifest", "mtime"

    [late]
    per_day = 0.10                       # fraction of the lab's points lost per started day late
    grace_hours = 2                      # up to this long after the due date is on time
    cap = 0.5                            # the most a late submission can lose (0..1)

    [[labs]]
    id = "lab1_graph"                    # lab id; also the folder submissions/lab1_graph/
    spec = "labs/lab1_graph"             # optional: folder holding spec.py (default: the lab id)
    name = "Lab 1: graphs"               # optional: the LMS's column name (default: the title)
    due = 2026-10-05T23:59:00+08:00      # with its UTC offset
    points = 10                          # optional: points in the LMS (default: the lab's own)

    [[students]]
    id = "s001"                          # the name of the student's submission file or folder
    name = "Ada Lovelace"
    email = "ada@example.edu"            # Moodle matches on it
    login = "ada"                        # optional: Canvas "SIS Login ID"
    sis_id = "2026001"                   # optional: Canvas "SIS User ID", Moodle "ID number"
    canvas_id = "4242"                   # optional: Canvas "ID"
    section = "A"                        # optional: Canvas "Section"

    [[extensions]]
    student = "s001"
    lab = "lab1_graph"
    days = 2                             # the due date moves by this many days for this student

Every mistake is a :class:`CourseFileError` that names the file, the key and what
to write instead; nothing is guessed.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..grade import STUDENT_ID
from ..notebook import exercise_points, read_notebook
from ..spec import LabSpec, load_lab

COUNTS = ("best", "latest")
TIMES = ("manifest", "mtime")


class CourseFileError(ValueError):
    """The course file says something the grader cannot use."""

    def __init__(self, path: Path, key: str, problem: str):
        super().__init__(f"{path}: {key}: {problem}")


@dataclass(frozen=True)
class LatePolicy:
    per_day: float = 0.0
    grace_hours: float = 0.0
    cap: float = 1.0


@dataclass(frozen=True)
class CourseLab:
    id: str
    spec: LabSpec
    name: str
    due: dt.datetime
    points: float        # in the LMS; a lab's score is rescaled from its own maximum


@dataclass(frozen=True)
class Student:
    id: str
    name: str
    email: str
    login: str = ""
    sis_id: str = ""
    canvas_id: str = ""
    section: str = ""


@dataclass(frozen=True)
class Course:
    path: Path
    title: str
    submissions: Path
    gradebook: Path
    counts: str
    times: str
    late: LatePolicy
    labs: tuple[CourseLab, ...]
    students: tuple[Student, ...]
    extensions: dict[tuple[str, str], float] = field(default_factory=dict)

    def lab(self, lab_id: str) -> CourseLab:
        for lab in self.labs:
            if lab.id == lab_id:
                return lab
        raise LookupError(f"{self.path}: no lab {lab_id!r}; the course's labs are "
                          f"{', '.join(lab.id for lab in self.labs)}")

    def student(self, student_id: str) -> Student:
        for student in self.students:
            if student.id == student_id:
                return student
        raise LookupError(f"{self.path}: no student {student_id!r} in [[students]]")

    def due_for(self, lab: CourseLab, student: str) -> dt.datetime:
        """The lab's due date for ``student``, moved by their extension if they have one."""
        return lab.due + dt.timedelta(days=self.extensions.get((lab.id, student), 0.0))


class _Reader:
    """Reads one table of the course file, naming the key of every mistake."""

    def __init__(self, path: Path, table: dict, where: str):
        self.path, self.table, self.where = path, table, where

    def _key(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, problem: str):
        raise CourseFileError(self.path, self._key(key), problem)

    def text(self, key: str, default: str | None = None, example: str = "...") -> str:
        value = self.table.get(key, default)
        if value is None:
            self.fail(key, f"missing; write {key} = \"{example}\"")
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"must be a non-empty string, like {key} = \"{example}\"")
        return value.strip()

    def number(self, key: str, default: float | None, low: float, high: float | None,
               example: str) -> float:
        value = self.table.get(key, default)
        if value is None:
            self.fail(key, f"missing; write {key} = {example}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(key, f"must be a number, like {key} = {example}")
        if value < low or (high is not None and value > high):
            bound = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            self.fail(key, f"is {value:g}; it must be {bound}, like {key} = {example}")
        return float(value)

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.table.get(key, default)
        if value not in choices:
            self.fail(key, f"is {value!r}; write one of " + ", ".join(f'"{c}"' for c in choices))
        return value

    def when(self, key: str) -> dt.datetime:
        value = self.table.get(key)
        example = f"{key} = 2026-10-05T23:59:00+08:00"
        if value is None:
            self.fail(key, f"missing; write a date with its UTC offset, like {example}")
        if not isinstance(value, dt.datetime):
            self.fail(key, f"must be a TOML date-time (not quoted), like {example}")
        if value.tzinfo is None:
            self.fail(key, f"{value.isoformat()} has no UTC offset, so its moment is unknown; "
                           f"add one, like {example} (or Z for UTC)")
        return value

    def unknown(self, allowed: set[str]) -> None:
        extra = sorted(set(self.table) - allowed)
        if extra:
            self.fail(extra[0], f"unknown key; the keys here are {', '.join(sorted(allowed))}")


def _tables(path: Path, data: dict, key: str) -> list[dict]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise CourseFileError(path, key, f"must be an array of tables: write [[{key}]] headers")
    return value


def _load_spec(path: Path, where: str, lab_id: str, spec: str | None) -> LabSpec:
    target = (path.parent / spec) if spec else lab_id
    try:
        lab = load_lab(target)
    except (LookupError, ValueError, TypeError, ImportError) as err:
        raise CourseFileError(path, f"{where}.spec", f"cannot load lab {target}: {err}; set "
                              "spec = \"path/to/folder\" (a folder holding spec.py, relative "
                              "to the course file)") from err
    if lab.id != lab_id:
        raise CourseFileError(path, f"{where}.id", f"is {lab_id!r} but {target} defines lab "
                              f"{lab.id!r}; write id = \"{lab.id}\"")
    return lab


def _lab(path: Path, i: int, table: dict) -> CourseLab:
    r = _Reader(path, table, f"labs[{i}]")
    r.unknown({"id", "spec", "name", "due", "points"})
    lab_id = r.text("id", example="lab1_graph")
    if not lab_id.isidentifier():
        r.fail("id", f"{lab_id!r} is not a lab id (letters, digits and _), like id = "
                     "\"lab1_graph\"")
    spec = _load_spec(path, f"labs[{i}]", lab_id,
                      r.text("spec", example="labs/lab1_graph") if "spec" in table else None)
    name = r.text("name", default=spec.title, example=spec.title)
    own = sum(exercise_points(read_notebook(spec.source)).values())
    return CourseLab(lab_id, spec, name, r.when("due"), r.number("points", own, 0.0, None, "10"))


def _student(path: Path, i: int, table: dict) -> Student:
    r = _Reader(path, table, f"students[{i}]")
    fields_ = {"id", "name", "email", "login", "sis_id", "canvas_id", "section"}
    r.unknown(fields_)
    sid = r.text("id", example="s001")
    if not STUDENT_ID.match(sid):
        r.fail("id", f"{sid!r} cannot name a file: use letters, digits and _.@+- (starting "
                     "with a letter or digit), like id = \"s001\"")
    email = r.text("email", example="ada@example.edu")
    if "@" not in email:
        r.fail("email", f"{email!r} is not an e-mail address; write email = \"ada@example.edu\"")
    optional = {}
    for key in ("login", "sis_id", "canvas_id", "section"):
        if key in table:
            value = table[key]
            if isinstance(value, int) and not isinstance(value, bool):
                value = str(value)
            optional[key] = _Reader(path, {key: value}, f"students[{i}]").text(key)
    return Student(sid, r.text("name", example="Ada Lovelace"), email, **optional)


def load_course(path: Path | str) -> Course:
    """Read and check the course file at ``path``."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise CourseFileError(path, "(file)", f"cannot be read: {err.strerror}") from err
    except tomllib.TOMLDecodeError as err:
        raise CourseFileError(path, "(syntax)", f"not valid TOML: {err}") from err
    top = _Reader(path, data, "")
    top.unknown({"course", "late", "labs", "students", "extensions"})
    course = data.get("course", {})
    late = data.get("late", {})
    for key, table in (("course", course), ("late", late)):
        if not isinstance(table, dict):
            raise CourseFileError(path, key, f"must be a table: write a [{key}] header")
    c = _Reader(path, course, "course")
    c.unknown({"title", "submissions", "gradebook", "counts", "times"})
    lr = _Reader(path, late, "late")
    lr.unknown({"per_day", "grace_hours", "cap"})
    policy = LatePolicy(lr.number("per_day", 0.0, 0.0, 1.0, "0.1"),
                        lr.number("grace_hours", 0.0, 0.0, None, "2"),
                        lr.number("cap", 1.0, 0.0, 1.0, "0.5"))
    labs = [_lab(path, i, t) for i, t in enumerate(_tables(path, data, "labs"))]
    if not labs:
        raise CourseFileError(path, "labs", "the course has no lab; add a [[labs]] table with "
                              "id and due")
    students = [_student(path, i, t) for i, t in enumerate(_tables(path, data, "students"))]
    if not students:
        raise CourseFileError(path, "students", "the roster is empty; add a [[students]] table "
                              "with id, name and email per student")
    for kind, items in (("labs", labs), ("students", students)):
        seen = set()
        for i, item in enumerate(items):
            if item.id in seen:
                raise CourseFileError(path, f"{kind}[{i}].id", f"{item.id!r} appears twice; "
                                      "each id must be unique")
            seen.add(item.id)
    lab_ids, student_ids = {lab.id for lab in labs}, {s.id for s in students}
    extensions = {}
    for i, table in enumerate(_tables(path, data, "extensions")):
        r = _Reader(path, table, f"extensions[{i}]")
        r.unknown({"student", "lab", "days"})
        student, lab = r.text("student", example="s001"), r.text("lab", example=labs[0].id)
        if student not in student_ids:
            r.fail("student", f"{student!r} is not in [[students]]; use one of their ids")
        if lab not in lab_ids:
            r.fail("lab", f"{lab!r} is not in [[labs]]; write one of "
                          f"{', '.join(sorted(lab_ids))}")
        extensions[lab, student] = r.number("days", None, 0.0, None, "2")
    here = path.parent
    return Course(path=path, title=c.text("title", example="Framework internals"),
                  submissions=here / c.text("submissions", "submissions"),
                  gradebook=here / c.text("gradebook", "build/grades/term.sqlite3"),
                  counts=c.choice("counts", "best", COUNTS),
                  times=c.choice("times", "manifest", TIMES),
                  late=policy, labs=tuple(labs), students=tuple(students),
                  extensions=extensions)
