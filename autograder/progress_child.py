"""The child process of :mod:`autograder.progress`: defines a notebook's functions and runs
``check()``'s public cases on them.

Reads ``{"jobs": [{"id", "lab", "sources"}], "language", "out"}`` as JSON on stdin; for
each job it runs, in a fresh namespace and in order, the lab's support cells from its
trusted source notebook (as grading does; none for a chapter's practice) and the sources
(a source that raises is noted and the next one still runs, as when a learner runs the
cells one by one), then
:func:`autograder.check.run_check` with that namespace, and writes one record per job
(``status``, ``passed``, ``total``, ``detail``) to ``out``. Its printed output goes nowhere: the
parent discards it.
"""

from __future__ import annotations

import json
import sys

from .check import run_check
from .notebook import read_notebook, support_sources
from .spec import load_lab


def run_job(job: dict, language: str) -> dict:
    namespace = {"__name__": "__main__"}
    problems = []
    support = support_sources(read_notebook(load_lab(job["lab"]).source)) if job["lab"] else []
    for source in support + job["sources"]:
        try:
            exec(compile(source, f"<{job['id']}>", "exec"), namespace)
        except BaseException as err:   # noqa: BLE001 - the learner's cell, whatever it raises
            problems.append(f"{type(err).__name__}: {err}")
    try:
        report = run_check(job["id"], lab=job["lab"], namespace=namespace, lang=language)
    except BaseException as err:   # noqa: BLE001 - exit() inside the function, say
        return {"status": "error", "passed": 0, "detail": f"{type(err).__name__}: {err}"}
    detail = next((r.message for r in report.results if r.status != "passed"), "")
    if problems and report.status != "passed":
        detail = problems[-1]
    return {"status": report.status, "passed": report.passed, "total": len(report.results),
            "detail": detail[:300]}


def main() -> None:
    request = json.loads(sys.stdin.read())
    records = []
    for job in request["jobs"]:
        records.append(run_job(job, request["language"]))
    with open(request["out"], "w", encoding="utf-8") as out:
        json.dump(records, out)


if __name__ == "__main__":
    main()
