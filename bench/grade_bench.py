"""Grading throughput: 100 copies of a lab-2 submission with -j 2.

Prints seconds per submission (amortised over the batch) and the sandbox
start-up overhead measured on its own: a one-exercise sandbox whose function
returns at once, timed from spawn to ready (interpreter, numpy, namespaces, fresh
root, limits) and from spawn to exit (plus the exercise child: fork, privilege
drop, import guard, running the cell). One sandbox serves a whole submission,
with one forked child per exercise for its public cases and one for its hidden
cases. Goal: under 0.5 s per submission amortised on 2 cores.

    python bench/grade_bench.py [--copies 100] [-j 2] [--lab lab2_autodiff]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.grade import grade_batch, prepare  # noqa: E402
from autograder.gradebook import Gradebook  # noqa: E402
from autograder.sandbox import Limits, run_exercise  # noqa: E402
from autograder.spec import load_lab  # noqa: E402


def startup_overhead(repeats: int = 20) -> tuple[float, float]:
    cells = [{"index": 0, "exercise": "noop", "source": "def noop():\n    return 0\n"}]
    ready, total = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        run = run_exercise(exercise_id="noop", function="noop", cells=cells, support=[],
                           cases=[((), {})], limits=Limits(wall_s=10))
        total.append(time.perf_counter() - start)
        assert run.outcomes[0].status == "returned", run
        ready.append(run.startup_s)
    return statistics.median(ready), statistics.median(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--lab", default="lab2_autodiff")
    args = parser.parse_args()

    lab_dir = ROOT / "labs" / args.lab
    if (lab_dir / "samples" / "full_marks.ipynb").is_file():
        lab, sample = load_lab(args.lab), lab_dir / "samples" / "full_marks.ipynb"
    else:
        toy = ROOT / "tests" / "autograder" / "toy_lab"
        lab, sample = load_lab(toy), toy / "source.ipynb"
    plan = prepare(lab)
    n_ex = len(lab.exercises)

    ready, total = startup_overhead()
    print(f"sandbox start-up: {ready * 1000:.0f} ms to ready, {total * 1000:.0f} ms spawn to "
          f"exit (median of 20, a function that returns at once)")

    work = Path(tempfile.mkdtemp(prefix="grade-bench-"))
    try:
        subs = work / "subs"
        subs.mkdir()
        for i in range(args.copies):
            shutil.copy(sample, subs / f"student{i:03d}.ipynb")
        start = time.perf_counter()
        with Gradebook(work / "gradebook.sqlite3") as book:
            summary = grade_batch(plan, sorted(subs.glob("*.ipynb")), book, jobs=args.jobs,
                                  progress=False)
        wall = time.perf_counter() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)
    full = sum(g.score == g.max_score for g in summary.grades)
    per_sub = wall / args.copies
    print(f"{lab.id}: {args.copies} submissions x {n_ex} exercises, -j {args.jobs}: "
          f"{wall:.1f} s, {per_sub:.2f} s per submission amortised "
          f"({args.copies * n_ex / wall:.1f} exercises/s); {full}/{args.copies} full marks")
    print(f"start-up share: {ready / args.jobs / per_sub:.0%} of the amortised time per "
          f"submission; goal < 0.5 s/submission: {'met' if per_sub < 0.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
