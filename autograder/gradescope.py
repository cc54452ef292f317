"""Gradescope: an autograder zip, and the script that runs inside it.

``build_zip(lab_id, out)`` writes a zip with Gradescope's two entry points at its
top level and the course source beside them:

* ``setup.sh`` — installs Python, the CPU build of torch and the course
  (editable, so the course files stay under ``/autograder/source``, which is then
  made unreadable to the unprivileged user the sandbox runs as);
* ``run_autograder`` — ``python -m autograder gradescope-run <lab_id>``, which
  grades the single notebook in ``/autograder/submission`` and writes
  ``/autograder/results/results.json``.

:func:`results_for` turns a grade into Gradescope's results format: top-level
``score``, ``execution_time``, ``output`` and ``tests`` (one per case: ``name``,
``number``, ``score``, ``max_score``, ``status``, ``output``, ``visibility``).
Hidden cases report only their name and outcome. If grading itself fails,
:func:`failure_results` still gives a valid file, score 0, saying why, so the
student sees a message rather than Gradescope's generic error.
"""

from __future__ import annotations

import json
import time
import traceback
import zipfile
from pathlib import Path

from .export import LABELS

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("pyproject.toml", "README.md", "chapters", "vizkit", "autograder", "labs")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip graphviz >/dev/null
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --quiet --upgrade pip
/autograder/venv/bin/pip install --quiet torch --index-url https://download.pytorch.org/whl/cpu
/autograder/venv/bin/pip install --quiet -e /autograder/source/course
# The sandbox drops to uid nobody: keep the specs and solutions out of its reach.
chmod -R go-rwx /autograder/source
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission; results land in /autograder/results.
cd /autograder/source/course
exec /autograder/venv/bin/python -m autograder gradescope-run {lab_id} \\
    --submission /autograder/submission --results /autograder/results/results.json
"""


def _ship(zf: zipfile.ZipFile, root: Path) -> None:
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


def build_zip(lab_id: str, out: Path | str, root: Path = PROJECT_ROOT) -> Path:
    """Write the Gradescope autograder zip for ``lab_id``; return its path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in (("setup.sh", SETUP_SH),
                           ("run_autograder", RUN_AUTOGRADER.format(lab_id=lab_id))):
            info = zipfile.ZipInfo(name, date_time=time.gmtime()[:6])
            info.external_attr = 0o755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text)
        _ship(zf, root)
    return out


def results_for(grade, seconds: float) -> dict:
    """Gradescope results for one :class:`autograder.grade.SubmissionGrade`."""
    tests = []
    for n_ex, ex in enumerate(grade.exercises, start=1):
        for n_case, case in enumerate(ex.cases, start=1):
            label = LABELS.get(case.status, case.status)
            if case.hidden:
                output = f"hidden case: {label}"
            else:
                output = label + (f": {case.message}" if case.message else "")
                if case.detail:
                    output += (f"\ninput: {case.detail.get('args')}\nexpected: "
                               f"{case.detail.get('expected')}")
                    if "got" in case.detail:
                        output += f"\ngot: {case.detail['got']}"
            tests.append({"name": f"{ex.exercise}: {case.name}" + (" (hidden)" if case.hidden
                                                                  else ""),
                          "number": f"{n_ex}.{n_case}", "score": round(case.score, 6),
                          "max_score": round(case.max_score, 6),
                          "status": "passed" if case.status == "passed" else "failed",
                          "output": output[:8000], "visibility": "visible"})
    summary = "\n".join(f"{ex.exercise}: {ex.score:g} / {ex.max_score:g} "
                        f"({LABELS.get(ex.status, ex.status)})" for ex in grade.exercises)
    notes = "\n".join(n for n in grade.notes if "sandbox" not in n)
    return {"score": round(grade.score, 6), "execution_time": int(round(seconds)),
            "output": (summary + ("\n\n" + notes if notes else ""))[:20000],
            "stdout_visibility": "hidden", "visibility": "visible", "tests": tests}


def failure_results(message: str, seconds: float = 0.0) -> dict:
    return {"score": 0.0, "execution_time": int(round(seconds)),
            "output": ("The autograder could not grade this submission. This is not a "
                       "judgement of your work; tell your instructor.\n\n" + message)[:20000],
            "stdout_visibility": "hidden", "visibility": "visible", "tests": []}


def run(lab_id: str, submission_dir: Path | str, results_path: Path | str) -> int:
    """Grade the one notebook in ``submission_dir``; always write ``results_path``.

    Returns 0 when grading ran (whatever the score), 1 when the grader failed.
    """
    from .grade import grade_notebook, prepare
    from .spec import load_lab

    start = time.perf_counter()
    results_path = Path(results_path)
    results_path.parent.mkdir(parents=True, exist_ok=True)
    code = 0
    try:
        notebooks = sorted(Path(submission_dir).rglob("*.ipynb"))
        notebooks = [p for p in notebooks if ".ipynb_checkpoints" not in p.parts]
        if not notebooks:
            results = failure_results("No .ipynb file was found in your submission; upload your "
                                      "lab notebook.")
            results["output"] = results["output"].replace(
                "The autograder could not grade this submission. This is not a judgement of "
                "your work; tell your instructor.\n\n", "")
        else:
            plan = prepare(load_lab(lab_id))
            grade = grade_notebook(plan, notebooks[0])
            results = results_for(grade, time.perf_counter() - start)
            if len(notebooks) > 1:
                results["output"] += (f"\n\n{len(notebooks)} notebooks were submitted; graded "
                                      f"{notebooks[0].name}.")
    except Exception:
        code = 1
        results = failure_results(traceback.format_exc(limit=5), time.perf_counter() - start)
    results["execution_time"] = int(round(time.perf_counter() - start))
    results_path.write_text(json.dumps(results, indent=1))
    return code
