"""Running untrusted exercise code in a separate, limited process (trusted side).

:func:`run_submission` starts one ``python -I -B sandbox_child.py`` per
submission (see that module for how it is isolated and how each exercise gets its
own forked, unprivileged child) with a scrubbed environment, a private temporary
directory, the payload on stdin and then no stdin, and one result pipe carrying
JSON lines: the supervisor's own (``Z``-tagged: ready, and the end of each
exercise with its reason, exit status and the first bytes of its output) and the
exercise children's, relayed under the tag of the exercise they were forked for.
The parent enforces an overall wall-clock budget on top of the supervisor's
per-exercise limits and kills the whole process group at the end; when running
as root the sandbox's PID namespace dies with it.

Nothing the children write is trusted: result lines are parsed defensively,
values are rebuilt by :mod:`autograder.codec`, and a case without a result line is
"timeout" or "crashed", never "passed".
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import codec

CHILD = Path(__file__).with_name("sandbox_child.py")
PROJECT_ROOT = Path(__file__).resolve().parents[1]
UNAVAILABLE = ("autograder", "labs", "chapters", "vizkit")
PRELOAD = ("numpy",)


@dataclass(frozen=True)
class Limits:
    """Per-exercise sandbox limits. ``wall_s`` counts from the moment the sandbox
    is ready (interpreter started, isolation done) to the last case."""

    wall_s: float = 10.0
    cpu_s: float | None = None      # default: same as wall_s
    memory_mb: int = 1024           # address space
    file_mb: int = 8                # largest file the code may write
    nproc: int = 16                 # processes of uid nobody, all sandboxes together
    output_bytes: int = 8192        # stdout/stderr kept for feedback
    result_bytes: int = 64 * 1024 * 1024
    startup_s: float = 20.0
    other_cell_s: float = 2.0       # top-level time of another exercise's cell
    isolate: bool = True            # namespaces + fresh root when root (False: limits only)


@dataclass
class CaseOutcome:
    status: str         # returned | not_attempted | raised | unencodable | forbidden | missing
    #                     | timeout | crashed
    value: object = None
    message: str = ""
    seconds: float = 0.0


@dataclass
class SandboxRun:
    outcomes: list[CaseOutcome]
    stdout: str = ""
    stderr: str = ""
    notes: list[str] = field(default_factory=list)
    cell_errors: list[dict] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)
    timed_out: bool = False
    exit_code: int | None = None
    startup_s: float = 0.0          # spawn until the sandbox was ready (shared by its exercises)
    total_s: float = 0.0            # this exercise's child, fork to exit


class _BoundedReader(threading.Thread):
    """Drain a pipe to the end, keeping only the first ``keep`` bytes."""

    def __init__(self, stream, keep):
        super().__init__(daemon=True)
        self.stream, self.keep = stream, keep
        self.head, self.total = bytearray(), 0

    def run(self):
        try:
            while True:
                chunk = self.stream.read1(1 << 20)
                if not chunk:
                    return
                self.total += len(chunk)
                room = self.keep - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
        except (OSError, ValueError):
            return

    def text(self) -> str:
        text = bytes(self.head).decode("utf-8", errors="replace")
        if self.total > len(self.head):
            text += f"\n... [{self.total - len(self.head)} more bytes not kept]"
        return text


class _ResultReader(threading.Thread):
    """Parse the sandbox's result lines: ``Z<TAB>{...}`` from the supervisor,
    ``<k><TAB>{...}`` relayed from exercise ``k``'s child."""

    def __init__(self, fd, limit):
        super().__init__(daemon=True)
        self.file = os.fdopen(fd, "rb")
        self.limit = limit
        self.supervisor: list[dict] = []
        self.exercise: dict[int, list[dict]] = {}
        self.bad_lines = 0
        self.overflow = False
        self.ready = threading.Event()

    def run(self):
        seen = 0
        try:
            for line in self.file:
                seen += len(line)
                if seen > self.limit:
                    self.overflow = True
                    break
                tag, _, body = line.partition(b"\t")
                try:
                    event = json.loads(body)
                except (ValueError, RecursionError):
                    self.bad_lines += 1
                    continue
                if not isinstance(event, dict):
                    self.bad_lines += 1
                elif tag == b"Z":
                    self.supervisor.append(event)
                    if event.get("event") == "ready":
                        self.ready.set()
                elif tag.isdigit():
                    self.exercise.setdefault(int(tag), []).append(event)
                else:
                    self.bad_lines += 1
        except (OSError, ValueError):
            pass
        finally:
            self.ready.set()
            self.file.close()


def sandbox_env(home: str) -> dict:
    """The child's whole environment: nothing inherited from the grader."""
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": home,
            "TMPDIR": "/tmp", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1"}


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def encode_cases(cases: list[tuple[tuple, dict]]) -> list:
    """The cases' inputs as sent to the sandbox (encode once, run many)."""
    return [codec.encode((tuple(a), dict(k))) for a, k in cases]


@dataclass(frozen=True)
class Job:
    """One exercise to run: call ``function`` on each case's inputs (``(args, kwargs)``
    pairs or their :func:`encode_cases` form) within ``wall_s`` seconds."""

    exercise_id: str
    function: str
    cases: list
    forbid: tuple[str, ...] = ()
    wall_s: float = 10.0


def run_submission(*, cells: list[dict], support: list[str], jobs: list[Job],
                   limits: Limits = Limits()) -> list[SandboxRun]:
    """Run every job for one submission in one sandbox (one child per job).

    ``cells`` are the submission's exercise cells in notebook order, each
    ``{"index", "exercise", "source"}``; all of them run in every child (a later
    exercise may call an earlier one's function), but only a job's own cells and
    calls count for its forbidden imports, and other cells get
    ``limits.other_cell_s`` each.
    """
    tmp = tempfile.mkdtemp(prefix="autograder-")
    os.chmod(tmp, 0o700)
    root, work = os.path.join(tmp, "root"), os.path.join(tmp, "work")
    os.mkdir(root)
    os.mkdir(work)
    files = {f"cell_{c['index']:03d}_{c['exercise']}.py"[:120]: c["source"] for c in cells}
    all_forbidden = {m for job in jobs for m in job.forbid}
    payload = {
        "jobs": [{"exercise": j.exercise_id, "function": j.function, "forbid": sorted(j.forbid),
                  "wall_s": j.wall_s,
                  "cases": [c if isinstance(c, dict) else codec.encode((tuple(c[0]), dict(c[1])))
                            for c in j.cases]} for j in jobs],
        "cells": cells, "support": support,
        "unavailable": list(UNAVAILABLE), "hide_packages": list(UNAVAILABLE),
        "preload": [m for m in PRELOAD if m not in all_forbidden], "hide": [str(PROJECT_ROOT)],
        "root": root, "workdir": work, "files": files, "memory_mb": limits.memory_mb,
        "file_mb": limits.file_mb, "nproc": limits.nproc, "other_cell_s": limits.other_cell_s,
        "output_bytes": limits.output_bytes, "result_bytes": limits.result_bytes,
        "isolate": limits.isolate,
    }
    data = json.dumps(payload, allow_nan=False).encode()
    read_fd, write_fd = os.pipe()
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-B", str(CHILD), str(write_fd)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            pass_fds=(write_fd,), env=sandbox_env(work), cwd=work, start_new_session=True)
    finally:
        os.close(write_fd)
    out = _BoundedReader(proc.stdout, limits.output_bytes)
    err = _BoundedReader(proc.stderr, limits.output_bytes)
    results = _ResultReader(read_fd, limits.result_bytes * max(1, len(jobs)))
    for thread in (out, err, results):
        thread.start()
    try:
        proc.stdin.write(data)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    budget = sum(j.wall_s + 2.0 for j in jobs) + 2.0   # the supervisor enforces each wall_s
    killed = False
    try:
        results.ready.wait(limits.startup_s)
        ready_at = time.perf_counter()
        try:
            proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            killed = True
    finally:
        _kill(proc)
        proc.wait()
        for thread in (out, err, results):
            thread.join(timeout=2.0)
        shutil.rmtree(tmp, ignore_errors=True)
    total = time.perf_counter() - started
    startup = ready_at - started if any(e.get("event") == "ready" for e in results.supervisor) \
        else total
    notes = []
    for event in results.supervisor:
        if event.get("event") == "ready" and isinstance(event.get("notes"), list):
            notes += [str(n)[:500] for n in event["notes"][:5]]
    if results.bad_lines:
        notes.append(f"{results.bad_lines} unreadable line(s) on the result pipe ignored")
    if results.overflow:
        notes.append("the sandbox sent too much; the rest was ignored")
    ends = {e.get("exercise"): e for e in results.supervisor if e.get("event") == "end"}
    runs = []
    for k, job in enumerate(jobs):
        end = ends.get(k)
        run = SandboxRun(outcomes=[], stderr=err.text(), notes=list(notes),
                         exit_code=proc.returncode, startup_s=startup, total_s=total)
        if end is not None:
            run.stdout = str(end.get("output", ""))[: limits.output_bytes]
            dropped = end.get("output_total", 0)
            if type(dropped) is int and dropped > len(run.stdout.encode()):
                run.stdout += f"\n... [{dropped - len(run.stdout.encode())} more bytes not kept]"
            run.timed_out = end.get("reason") == "timeout"
            status = end.get("status")
            run.exit_code = status if type(status) is int else None
            seconds = end.get("seconds")
            run.total_s = float(seconds) if type(seconds) in (int, float) else 0.0
            cpu = end.get("reason") == "cpu"
        else:
            run.timed_out = killed
            cpu = False
            if not killed:
                run.notes.append("the sandbox ended before running this exercise: "
                                 + (err.text().strip().splitlines() or ["no message"])[-1])
        _collect(run, results.exercise.get(k, []), len(job.cases), job.exercise_id,
                 job.wall_s, cpu)
        runs.append(run)
    return runs


def run_exercise(*, exercise_id: str, function: str, cells: list[dict], support: list[str],
                 cases: list, forbid: tuple[str, ...] = (),
                 limits: Limits = Limits()) -> SandboxRun:
    """Run one exercise in its own sandbox (see :func:`run_submission`)."""
    job = Job(exercise_id, function, cases, tuple(forbid), limits.wall_s)
    return run_submission(cells=cells, support=support, jobs=[job], limits=limits)[0]


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "did not exit"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        return f"was killed by signal {name}"
    return f"exited with status {code}"


def _collect(run: SandboxRun, events: list[dict], n_cases: int, exercise_id: str,
             wall_s: float, cpu_killed: bool) -> None:
    by_case: dict[int, CaseOutcome] = {}
    for event in events:
        kind = event.get("event")
        if kind == "cell":
            run.cell_errors.append({"index": event.get("index"), "own": bool(event.get("own")),
                                    "exercise": str(event.get("exercise"))[:100],
                                    "error": str(event.get("error"))[:4000]})
        elif kind == "forbidden" and event.get("during") == exercise_id:
            run.forbidden.append(str(event.get("module"))[:100])
        elif kind == "case":
            i = event.get("i")
            if type(i) is not int or not 0 <= i < n_cases or i in by_case:
                continue
            by_case[i] = _case_outcome(event)
    for i in range(n_cases):
        if i in by_case:
            run.outcomes.append(by_case[i])
        elif run.timed_out or cpu_killed:
            limit = "CPU-time" if cpu_killed else "wall-clock"
            run.outcomes.append(CaseOutcome(
                "timeout", message=f"no result within the {limit} limit of "
                                   f"{wall_s:g} s for this exercise's cases"))
        else:
            run.outcomes.append(CaseOutcome(
                "crashed", message=f"the exercise's process {_describe_exit(run.exit_code)} "
                                   "before returning a result for this case"))


def _case_outcome(event: dict) -> CaseOutcome:
    status = event.get("status")
    seconds = event.get("seconds")
    seconds = float(seconds) if type(seconds) in (int, float) and math.isfinite(seconds) else 0.0
    message = str(event.get("error", ""))[:4000]
    if status == "returned":
        try:
            return CaseOutcome("returned", codec.decode(event.get("value")), seconds=seconds)
        except codec.CodecError as err:
            return CaseOutcome("unencodable", message=f"the returned value is malformed: {err}",
                               seconds=seconds)
    if status in ("not_attempted", "raised", "unencodable", "forbidden", "missing"):
        return CaseOutcome(status, message=message, seconds=seconds)
    return CaseOutcome("crashed", message="the sandbox sent an unknown result", seconds=seconds)
