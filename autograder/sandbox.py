"""Running untrusted exercise code in a separate, limited process (trusted side).

:func:`run_exercise` starts ``python -I -B sandbox_child.py`` (see that module for
what the child does and how it is isolated) with a scrubbed environment, a
private temporary directory, no stdin after the payload, and three pipes back:
stdout and stderr (read continuously, only the first bytes kept, so printing
100 MB neither blocks nor costs memory) and a result pipe carrying one JSON line
per event. The parent alone enforces the wall-clock limit (it kills the whole
process group; when running as root the child's PID namespace dies with it).

Nothing the child writes is trusted: result lines are parsed defensively, values
are rebuilt by :mod:`autograder.codec`, and a case without a result line is
"timeout" or "crashed", never "passed".
"""

from __future__ import annotations

import fcntl
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
    startup_s: float = 0.0
    total_s: float = 0.0


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
    """Parse the child's result lines; note the moment it reports ready."""

    def __init__(self, fd, limit):
        super().__init__(daemon=True)
        self.file = os.fdopen(fd, "rb")
        self.limit = limit
        self.events: list[dict] = []
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
                try:
                    event = json.loads(line)
                except (ValueError, RecursionError):
                    self.bad_lines += 1
                    continue
                if not isinstance(event, dict):
                    self.bad_lines += 1
                    continue
                self.events.append(event)
                if event.get("event") == "ready":
                    self.ready.set()
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


def run_exercise(*, exercise_id: str, function: str, cells: list[dict], support: list[str],
                 cases: list, forbid: tuple[str, ...] = (),
                 limits: Limits = Limits()) -> SandboxRun:
    """Run ``function`` on each case's inputs in a fresh sandbox.

    ``cases`` are ``(args, kwargs)`` pairs or their :func:`encode_cases` form.

    ``cells`` are the submission's exercise cells in notebook order, each
    ``{"index", "exercise", "source"}``; all of them run (a later exercise may call
    an earlier one's function), but only this exercise's own cells and calls count
    for forbidden imports, and other cells get ``limits.other_cell_s`` each.
    """
    tmp = tempfile.mkdtemp(prefix="autograder-")
    os.chmod(tmp, 0o700)
    root, work = os.path.join(tmp, "root"), os.path.join(tmp, "work")
    os.mkdir(root)
    os.mkdir(work)
    files = {f"cell_{c['index']:03d}_{c['exercise']}.py"[:120]: c["source"] for c in cells}
    payload = {
        "exercise": exercise_id, "function": function, "cells": cells, "support": support,
        "cases": [c if isinstance(c, dict) else codec.encode((tuple(c[0]), dict(c[1])))
                  for c in cases],
        "forbid": sorted(set(forbid)), "unavailable": [m for m in UNAVAILABLE if m not in forbid],
        "preload": [m for m in PRELOAD if m not in forbid], "hide": [str(PROJECT_ROOT)],
        "hide_packages": list(UNAVAILABLE),
        "root": root, "workdir": work, "files": files,
        "cpu_s": limits.cpu_s or limits.wall_s, "memory_mb": limits.memory_mb,
        "file_mb": limits.file_mb, "nproc": limits.nproc, "other_cell_s": limits.other_cell_s,
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
    for pipe in (proc.stdout, proc.stderr):  # bigger pipes: a flood of output drains faster
        try:
            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass
    out = _BoundedReader(proc.stdout, limits.output_bytes)
    err = _BoundedReader(proc.stderr, limits.output_bytes)
    results = _ResultReader(read_fd, limits.result_bytes)
    for thread in (out, err, results):
        thread.start()
    try:
        proc.stdin.write(data)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    timed_out = False
    try:
        results.ready.wait(limits.startup_s)
        ready_at = time.perf_counter()
        try:
            proc.wait(timeout=max(0.0, limits.wall_s - (time.perf_counter() - ready_at)))
        except subprocess.TimeoutExpired:
            timed_out = True
    finally:
        _kill(proc)
        proc.wait()
        for thread in (out, err, results):
            thread.join(timeout=2.0)
        shutil.rmtree(tmp, ignore_errors=True)
    run = SandboxRun(outcomes=[], stdout=out.text(), stderr=err.text(), timed_out=timed_out,
                     exit_code=proc.returncode, total_s=time.perf_counter() - started)
    run.startup_s = ready_at - started if results.ready.is_set() else run.total_s
    _collect(run, results, len(cases), exercise_id, limits)
    return run


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "did not exit"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        if -code == signal.SIGXCPU:
            return "was stopped by the CPU-time limit (SIGXCPU)"
        return f"was killed by signal {name}"
    return f"exited with status {code}"


def _collect(run: SandboxRun, results: _ResultReader, n_cases: int, exercise_id: str,
             limits: Limits) -> None:
    by_case: dict[int, CaseOutcome] = {}
    for event in results.events:
        kind = event.get("event")
        if kind == "ready" and isinstance(event.get("notes"), list):
            run.notes.extend(str(n)[:500] for n in event["notes"][:5])
        elif kind == "cell":
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
    if results.bad_lines:
        run.notes.append(f"{results.bad_lines} unreadable line(s) on the result pipe ignored")
    if results.overflow:
        run.notes.append(f"results over {limits.result_bytes} bytes; the rest was ignored")
    cpu_killed = run.exit_code == -signal.SIGXCPU
    for i in range(n_cases):
        if i in by_case:
            run.outcomes.append(by_case[i])
        elif run.timed_out or cpu_killed:
            limit = "CPU-time" if cpu_killed else "wall-clock"
            run.outcomes.append(CaseOutcome(
                "timeout", message=f"no result within the {limit} limit of "
                                   f"{limits.wall_s:g} s for this exercise's cases"))
        else:
            run.outcomes.append(CaseOutcome(
                "crashed", message=f"the sandbox {_describe_exit(run.exit_code)} before "
                                   "returning a result for this case"))


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
