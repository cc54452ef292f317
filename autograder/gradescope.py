"""Gradescope: an autograder zip, and the script that runs inside it.

``build_zip(lab_id, out)`` writes a zip with Gradescope's two entry points at its
top level, the course source under ``course/`` and a ``requirements.txt``:

* ``setup.sh`` makes a virtual environment from the image's ``python3`` (3.10 on
  Gradescope's default Ubuntu 22.04 image; 3.10 or newer is required) and installs
  only what grading this lab imports (:func:`grading_requirements`), torch from its
  CPU-only index when the lab's references need it. The course itself is not
  installed: it stays under ``/autograder/source``, which is then made unreadable
  to the unprivileged user the sandbox runs as.
* ``run_autograder`` runs ``python -m autograder gradescope-run <lab_id>`` from the
  course directory; it grades the single notebook in ``/autograder/submission`` and
  writes ``/autograder/results/results.json``.

Both scripts read three variables that Gradescope never sets, so that a test can
run them outside Gradescope: ``COURSE_AUTOGRADER_ROOT`` (instead of
``/autograder``), ``COURSE_AUTOGRADER_PYTHON`` (instead of ``python3``) and
``COURSE_AUTOGRADER_APT=0`` (skip ``apt-get``).

:func:`results_for` turns a grade into Gradescope's results format: top-level
``score``, ``execution_time``, ``output`` and ``tests`` (one per case: ``name``,
``number``, ``score``, ``max_score``, ``status``, ``output``, ``visibility``), with
every output rendered as plain text. Public cases are ``visible``; hidden cases get
the zip's hidden visibility (``after_published`` unless chosen otherwise), report
only their name and outcome, and are left out of the summary students see at once.
Scores are multiples of :data:`QUANTUM`, so the tests' maxima add up to the total
exactly. If grading itself fails, :func:`failure_results` still gives a valid file,
score 0, saying why, so the student sees a message rather than Gradescope's generic
error.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
import time
import traceback
import zipfile
from pathlib import Path

from .export import label
from .grade import grade_notebook, prepare, safe_error_type, submission_language
from .messages import message
from .notebook import read_submission
from .spec import load_lab

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("pyproject.toml", "README.md", "chapters", "vizkit", "autograder", "labs")
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
DEFAULT_HIDDEN_VISIBILITY = "after_published"
QUANTUM = 2.0 ** -20
"""Scores are reported as whole multiples of this binary fraction. Such numbers add
up exactly in floating point (and in decimal), in any order, so the tests' maxima
sum to the total and their scores to the score, however Gradescope adds them."""

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image. The
# course's grader runs on Python 3.10 or newer: the default Ubuntu 22.04 image's
# python3 is 3.10. COURSE_AUTOGRADER_* are for running this outside Gradescope.
set -euo pipefail
ROOT="${{COURSE_AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{COURSE_AUTOGRADER_PYTHON:-python3}}"
if [ "${{COURSE_AUTOGRADER_APT:-1}}" = 1 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "setup.sh: the grader needs Python 3.10 or newer, $PYTHON is older;" \\
         "choose Gradescope's Ubuntu 22.04 base image (or newer)" >&2
    exit 1
fi
"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install --quiet --upgrade pip
{torch}"$ROOT/venv/bin/pip" install --quiet -r "$ROOT/source/requirements.txt"
# The sandbox drops to uid nobody: keep the specs and solutions out of its reach.
chmod -R go-rwx "$ROOT/source"
"""

TORCH_CPU = """# The CPU build of torch, so pip does not pull the multi-GB CUDA build from PyPI.
"$ROOT/venv/bin/pip" install --quiet {requirement} \\
    --index-url https://download.pytorch.org/whl/cpu
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission; results land in /autograder/results.
ROOT="${{COURSE_AUTOGRADER_ROOT:-/autograder}}"
cd "$ROOT/source/course"
exec "$ROOT/venv/bin/python" -m autograder gradescope-run {lab_id} \\
    --hidden-visibility {visibility} \\
    --submission "$ROOT/submission" --results "$ROOT/results/results.json"
"""

PROBE = """
import json, sys
from importlib.metadata import packages_distributions
from autograder.grade import prepare
from autograder.spec import load_lab
prepare(load_lab(sys.argv[1]))
owners = packages_distributions()
tops = {m.partition(".")[0] for m in list(sys.modules)}
print(json.dumps(sorted({d for top in tops for d in owners.get(top, [])})))
"""


def _normalise(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    """The distribution a requirement such as ``"numpy>=1.26"`` names, normalised."""
    return _normalise(re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0])


def _declared_dependencies(root: Path) -> list[str]:
    """The project's runtime dependencies, as written in ``pyproject.toml``."""
    import tomllib  # the instructor's side only (Python 3.11+), never inside Gradescope

    return tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]


def grading_requirements(lab_id: str, root: Path = PROJECT_ROOT) -> list[str]:
    """The project's declared dependencies that grading ``lab_id`` imports.

    A fresh interpreter loads the lab and computes its expected values (what the
    grader does before it runs any submission); every distribution owning a module
    it then holds, and that ``pyproject.toml`` lists, is kept with its version range.
    """
    probe = subprocess.run([sys.executable, "-c", PROBE, lab_id], cwd=root,
                           capture_output=True, text=True, timeout=600)
    if probe.returncode != 0:
        raise RuntimeError(f"could not load lab {lab_id!r} to see what grading it imports:\n"
                           + probe.stderr[-2000:])
    imported = {_normalise(d) for d in json.loads(probe.stdout.splitlines()[-1])}
    return [r for r in _declared_dependencies(root) if _requirement_name(r) in imported]


def setup_script(requirements: list[str]) -> str:
    """``setup.sh`` for a lab whose grading needs ``requirements``."""
    torch = [r for r in requirements if _requirement_name(r) == "torch"]
    return SETUP_SH.format(torch=TORCH_CPU.format(requirement=shlex.quote(torch[0]))
                           if torch else "")


def _ship(zf: zipfile.ZipFile, root: Path) -> None:
    """Add the course source (:data:`SHIPPED`) under ``course/``, without caches."""
    for name in SHIPPED:
        path = root / name
        if path.is_file():
            zf.write(path, f"course/{name}")
            continue
        for file in sorted(path.rglob("*")):
            rel = file.relative_to(root)
            if file.is_file() and "__pycache__" not in rel.parts \
                    and ".ipynb_checkpoints" not in rel.parts:
                zf.write(file, f"course/{rel.as_posix()}")


def _write_script(zf: zipfile.ZipFile, name: str, text: str) -> None:
    """Add an executable script at the top of the zip."""
    info = zipfile.ZipInfo(name, date_time=time.gmtime()[:6])
    info.external_attr = 0o755 << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, text)


def build_zip(lab_id: str, out: Path | str, root: Path = PROJECT_ROOT,
              hidden_visibility: str = DEFAULT_HIDDEN_VISIBILITY) -> Path:
    """Write the Gradescope autograder zip for ``lab_id`` (a lab under ``labs/``);
    return its path. ``hidden_visibility`` is the Gradescope visibility of the
    hidden cases' tests."""
    if hidden_visibility not in VISIBILITIES:
        raise ValueError(f"hidden_visibility must be one of {', '.join(VISIBILITIES)}, "
                         f"not {hidden_visibility!r}")
    if not lab_id.isidentifier() or not (root / "labs" / lab_id / "spec.py").is_file():
        raise LookupError(f"{lab_id!r} is not a lab under {root / 'labs'}: the zip ships "
                          "the course's own labs only")
    requirements = grading_requirements(lab_id, root)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        _write_script(zf, "setup.sh", setup_script(requirements))
        _write_script(zf, "run_autograder", RUN_AUTOGRADER.format(
            lab_id=shlex.quote(lab_id), visibility=hidden_visibility))
        zf.writestr("requirements.txt", "".join(f"{r}\n" for r in requirements))
        _ship(zf, root)
    return out


def apportion(total_units: int, shares: list[float]) -> list[int]:
    """Split ``total_units`` into whole units in proportion to ``shares``.

    Largest remainder: each share gets the floor of its exact part, then the units
    left over go one each to the largest remainders (the earlier share on a tie), so
    the parts always sum to ``total_units`` and depend only on the shares.
    """
    whole = sum(shares)
    if not shares or whole <= 0:
        return [0] * len(shares)
    exact = [total_units * s / whole for s in shares]
    units = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(shares)), key=lambda i: units[i] - exact[i])
    for i in by_remainder[: total_units - sum(units)]:
        units[i] += 1
    return units


def case_units(ex) -> list[tuple[int, int]]:
    """``(score, max_score)`` of each of ``ex``'s cases, in units of :data:`QUANTUM`.

    The maxima split the exercise's points exactly; a case scores its maximum
    times the fraction of its own maximum the grade gave it.
    """
    maxima = apportion(round(ex.max_score / QUANTUM), [c.max_score for c in ex.cases])
    return [(round(top * case.score / case.max_score) if case.max_score > 0 else 0, top)
            for case, top in zip(ex.cases, maxima, strict=True)]


def _error_class(case, language: str) -> str:
    """The exception class an erring case raised, as a hidden case may show it
    (see :func:`autograder.grade.safe_error_type`); ``""`` when the grade does not say."""
    return safe_error_type(getattr(case, "error_type", "") or "", language)


def _hidden_output(case, language: str) -> str:
    """A hidden case's output: its outcome (and an error's exception class), nothing else."""
    output = message(language, "gs_hidden_output", label=label(case.status, language))
    error_class = _error_class(case, language) if case.status == "error" else ""
    return output + (f" ({error_class})" if error_class else "")


def _public_output(case, language: str) -> str:
    """A public case's output: outcome, message, input, expected and what came back."""
    def line(key: str, value) -> str:
        return "\n" + message(language, "fb_item", label=message(language, key), value=value)

    status = label(case.status, language)
    output = message(language, "fb_item", label=status, value=case.message) if case.message \
        else status
    if case.detail:
        output += line("fb_input", case.detail.get("args")) + line(
            "fb_expected", case.detail.get("expected"))
        if "got" in case.detail:
            output += line("fb_got", case.detail["got"])
    return output


def _test(number: str, exercise: str, case, units: tuple[int, int],
          hidden_visibility: str, language: str) -> dict:
    """One Gradescope test for one case; its name and output are in ``language``, its keys
    and statuses Gradescope's."""
    score, top = units
    output = _hidden_output(case, language) if case.hidden else _public_output(case, language)
    return {"name": f"{exercise}: {case.name}"
                    + (message(language, "gs_hidden_test") if case.hidden else ""),
            "number": number, "score": score * QUANTUM, "max_score": top * QUANTUM,
            "status": "passed" if case.status == "passed" else "failed",
            "output": output[:8000],
            "visibility": hidden_visibility if case.hidden else "visible"}


def _exercise_line(ex, units: list[tuple[int, int]], hidden_visibility: str,
                   language: str) -> str:
    """The summary line of one exercise; while hidden cases are not shown, it counts
    the public cases only, so the hidden ones' outcomes cannot be worked out from it."""
    if hidden_visibility == "visible":
        score = sum(s for s, _ in units) * QUANTUM
        top = sum(t for _, t in units) * QUANTUM
        return message(language, "fb_exercise", id=ex.exercise, score=f"{score:g}",
                       max=f"{top:g}", label=label(ex.status, language))
    public = [c for c in ex.cases if not c.hidden]
    hidden = len(ex.cases) - len(public)
    line = message(language, "gs_public_line", id=ex.exercise, total=len(public),
                   passed=sum(c.status == "passed" for c in public))
    when = message(language, f"gs_when_{hidden_visibility}")
    return line + (message(language, "gs_hidden_count", hidden=hidden, when=when)
                   if hidden else "")


def _results(score: float, output: str, tests: list[dict], seconds: float) -> dict:
    """The results file around ``tests``: all text rendered as text, stdout hidden."""
    return {"score": score, "execution_time": int(round(seconds)), "output": output[:20000],
            "output_format": "text", "test_output_format": "text", "test_name_format": "text",
            "stdout_visibility": "hidden", "visibility": "visible", "tests": tests}


def results_for(grade, seconds: float,
                hidden_visibility: str = DEFAULT_HIDDEN_VISIBILITY) -> dict:
    """Gradescope results for one :class:`autograder.grade.SubmissionGrade`.

    ``hidden_visibility`` is the visibility of the hidden cases' tests. The text is in
    the language the submission was graded in (``grade.language``).
    """
    language = grade.language
    tests, lines, scored = [], [], 0
    for n_ex, ex in enumerate(grade.exercises, start=1):
        units = case_units(ex)
        scored += sum(score for score, _ in units)
        lines.append(_exercise_line(ex, units, hidden_visibility, language))
        tests += [_test(f"{n_ex}.{n_case}", ex.exercise, case, u, hidden_visibility, language)
                  for n_case, (case, u) in enumerate(zip(ex.cases, units, strict=True), start=1)]
    notes = "\n".join(n for n in grade.notes if "sandbox" not in n)
    return _results(scored * QUANTUM, "\n".join(lines) + ("\n\n" + notes if notes else ""),
                    tests, seconds)


def failure_results(why: str, seconds: float = 0.0, language: str = "en") -> dict:
    """Results for a submission the grader could not grade: score 0 and why."""
    return _results(0.0, message(language, "gs_failure") + "\n\n" + why, [], seconds)


def _notebook_language(path: Path) -> str:
    """The language a submitted notebook names in its metadata (English if it names none
    or cannot be read)."""
    nb, _ = read_submission(path)
    return submission_language(nb) if nb is not None else "en"


def run(lab_id: str, submission_dir: Path | str, results_path: Path | str,
        hidden_visibility: str = DEFAULT_HIDDEN_VISIBILITY) -> int:
    """Grade the one notebook in ``submission_dir``; always write ``results_path``.

    Returns 0 when grading ran (whatever the score), 1 when the grader failed. The
    results speak the submitted notebook's language (see :mod:`autograder.grade`).
    """
    start = time.perf_counter()
    results_path = Path(results_path)
    results_path.parent.mkdir(parents=True, exist_ok=True)
    code, language = 0, "en"
    try:
        notebooks = sorted(Path(submission_dir).rglob("*.ipynb"))
        notebooks = [p for p in notebooks if ".ipynb_checkpoints" not in p.parts]
        if not notebooks:
            results = _results(0.0, message(language, "gs_no_notebook"), [], 0.0)
        else:
            language = _notebook_language(notebooks[0])
            plan = prepare(load_lab(lab_id))
            grade = grade_notebook(plan, notebooks[0])
            results = results_for(grade, time.perf_counter() - start, hidden_visibility)
            if len(notebooks) > 1:
                results["output"] += "\n\n" + message(language, "gs_several",
                                                       count=len(notebooks),
                                                       name=notebooks[0].name)
    except Exception:
        code = 1
        results = failure_results(traceback.format_exc(limit=5), time.perf_counter() - start,
                                  language)
    results["execution_time"] = int(round(time.perf_counter() - start))
    results_path.write_text(json.dumps(results, indent=1))
    return code
