"""Running untrusted exercise code in a separate, limited process (trusted side).

:func:`run_submission` starts one ``python -I -B sandbox_child.py`` per
submission (see that module for how it is isolated, and how each *run* — one
exercise's public cases, or its hidden cases — gets its own forked child under a
uid of the sandbox's own) with a scrubbed environment, a private temporary
directory, and stdin carrying length-prefixed frames: a header (cells, runs,
limits) and then each run's case inputs, public runs first. One result pipe
carries JSON lines: the supervisor's (``Z``-tagged) and the children's, relayed
under the tag of the run they were forked for.

Everything read back is hostile. The reader here caps the bytes of one line, of
one run and of the whole sandbox *before* parsing, and the JSON items of one
line and of the whole sandbox, so that whatever a submission sends the grader
holds a bounded amount (:data:`Limits` says how much); each case's value is
rebuilt by :mod:`autograder.codec` as it arrives, and anything that fails to
parse or decode makes that case an error with a message, never an exception
here. A case without a result line is "timeout", "too_large" or "crashed",
never "passed". The parent enforces an overall wall-clock budget on top of the
supervisor's per-run limits, kills the whole process group at the end and,
where the sandbox had no PID namespace, every process of its uid.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
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
from .messages import message
from .sandbox_child import CASE_LINE

CHILD = Path(__file__).with_name("sandbox_child.py")
PROJECT_ROOT = Path(__file__).resolve().parents[1]
UNAVAILABLE = ("autograder", "labs", "chapters", "vizkit")
PRELOAD = ("numpy",)
NOBODY = 65534
UID_BASE, UID_COUNT = 0x5A000000, 0x01000000   # a uid of its own for each sandbox
TMP_PREFIX = "autograder-"
STALE_DIR = re.compile(rf"^{TMP_PREFIX}(\d+)-")


@dataclass(frozen=True)
class Limits:
    """Per-exercise sandbox limits. ``wall_s`` counts from the moment the sandbox
    is ready (interpreter started, isolation done) to the last case.

    What the grader holds of one sandbox's results is bounded by the caps below:
    at most ``submission_bytes`` of result lines, each at most ``line_bytes``,
    whose JSON has at most ``submission_items`` containers and items in all. A
    decoded item costs at most ~60 bytes of Python objects, so a sandbox costs
    the grader at most about ``submission_bytes + 60 * submission_items`` bytes
    (~80 MiB with the defaults), however hostile."""

    wall_s: float = 10.0
    memory_mb: int = 1024           # address space
    file_mb: int = 8                # largest file the code may write
    nproc: int = 16                 # processes of the sandbox's uid
    output_bytes: int = 8192        # stdout/stderr kept for feedback
    line_bytes: int = 1 << 20       # one result line (one case's value)
    result_bytes: int = 8 << 20     # all result lines of one run
    submission_bytes: int = 16 << 20
    line_items: int = 200_000       # JSON containers + items in one result line
    submission_items: int = 1_000_000
    startup_s: float = 20.0
    other_cell_s: float = 2.0       # top-level time of another exercise's cell
    isolate: bool = True            # namespaces + fresh root when root (False: limits only)


@dataclass
class CaseOutcome:
    status: str         # returned | not_attempted | raised | unencodable | forbidden | missing
    #                     | too_large | timeout | crashed
    value: object = None
    message: str = ""
    seconds: float = 0.0
    error_type: str = ""


@dataclass
class SandboxRun:
    """One exercise's result: its cases in spec order (from the public and the hidden
    run), the public run's output, and what happened to the processes."""

    outcomes: list[CaseOutcome]
    stdout: str = ""
    stderr: str = ""
    notes: list[str] = field(default_factory=list)          # about the sandbox as a whole
    cell_notes: list[str] = field(default_factory=list)     # cells skipped for this exercise
    cell_errors: list[dict] = field(default_factory=list)
    skipped_cells: dict[int, str] = field(default_factory=dict)   # cell index -> how it failed
    forbidden: list[str] = field(default_factory=list)   # imported in the exercise's own code
    timed_out: bool = False
    exit_code: int | None = None
    startup_s: float = 0.0          # spawn until the sandbox was ready (shared by its exercises)
    total_s: float = 0.0            # this exercise's children, fork to exit


@dataclass(frozen=True)
class Job:
    """One exercise to run: call ``function`` on each case's inputs (``(args, kwargs)``
    pairs or their :func:`encode_cases` form) within ``wall_s`` seconds for the
    public cases and again for the hidden ones (``hidden[i]`` marks case ``i``)."""

    exercise_id: str
    function: str
    cases: list
    forbid: tuple[str, ...] = ()
    wall_s: float = 10.0
    hidden: tuple[bool, ...] = ()

    def is_hidden(self, i: int) -> bool:
        return i < len(self.hidden) and self.hidden[i]


@dataclass
class _Run:
    """What came back for one run: its cases (by position in the run) and its end."""

    job: int
    positions: list[int]            # the exercise's case indices, in run order
    hidden: bool
    outcomes: dict[int, CaseOutcome] = field(default_factory=dict)
    cell_errors: list[dict] = field(default_factory=list)
    forbidden: list[tuple[str, str]] = field(default_factory=list)  # (module, whose code)
    skipped: dict[int, str] = field(default_factory=dict)
    lost: dict[int, str] = field(default_factory=dict)
    end: dict | None = None
    items: int = 0
    bytes: int = 0


def encode_cases(cases: list[tuple[tuple, dict]]) -> list:
    """The cases' inputs as sent to the sandbox (encode once, run many)."""
    return [codec.encode((tuple(a), dict(k))) for a, k in cases]


def sandbox_env(home: str) -> dict:
    """The child's whole environment: nothing inherited from the grader."""
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": home,
            "TMPDIR": "/tmp", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1"}


# ---------------------------------------------------------------- uids and cleanup

_UIDS_IN_USE: set[int] = set()
_UID_LOCK = threading.Lock()


def _uid_pool() -> range:
    """The uids a sandbox may take: a block no real account uses, inside this
    process's user-namespace mapping (a container may map only 65,536)."""
    try:
        with open("/proc/self/uid_map") as fh:
            maps = [tuple(int(x) for x in line.split()) for line in fh if line.strip()]
    except (OSError, ValueError):
        maps = []
    for inside, _, count in maps:
        if inside <= UID_BASE and UID_BASE + UID_COUNT <= inside + count:
            return range(UID_BASE, UID_BASE + UID_COUNT)
    for inside, _, count in maps:
        if inside <= 40_000 and inside + count > 65_534:
            return range(40_000, 65_534)
    return range(NOBODY, NOBODY + 1)


def _take_uid() -> int:
    pool, pick = _uid_pool(), random.SystemRandom()
    with _UID_LOCK:
        for _ in range(100):
            uid = pick.choice(pool)
            if uid not in _UIDS_IN_USE:
                break
        _UIDS_IN_USE.add(uid)
    return uid


def _give_uid(uid: int) -> None:
    with _UID_LOCK:
        _UIDS_IN_USE.discard(uid)


def _processes_of(uid: int) -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as fh:
                for line in fh:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(name))
                        break
        except (OSError, ValueError, IndexError):
            continue
    return pids


def kill_uid(uid: int, rounds: int = 200) -> int:
    """SIGKILL every process of ``uid`` until none is left (their number is capped by
    RLIMIT_NPROC, and a killed process forks no more). Returns how many were seen."""
    seen = 0
    for _ in range(rounds):
        pids = _processes_of(uid)
        if not pids:
            break
        seen += len(pids)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.005)
    return seen


def remove_stale_dirs(parent: str | None = None) -> list[str]:
    """Remove the temporary folders of graders that were killed (their pid is gone)."""
    parent = parent or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    for name in names:
        match = STALE_DIR.match(name)
        if not match or _alive(int(match.group(1))):
            continue
        shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
        removed.append(name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- reading what comes back

def _text(value, limit: int = 4000) -> str:
    return value[:limit] if type(value) is str else ""


def _seconds(value) -> float:
    if type(value) is int and 0 <= value < 10**6:
        return float(value)
    if type(value) is float and math.isfinite(value) and 0 <= value < 1e6:
        return value
    return 0.0


def _error_type(value) -> str:
    """An exception class name the child reports, kept only if it is an identifier."""
    text = _text(value, 100)
    return text if text.isidentifier() else ""


def _int(value, low: int, high: int) -> int | None:
    return value if type(value) is int and low <= value < high else None


class _ResultReader(threading.Thread):
    """Read the result pipe: caps first, then JSON, then each case's value decoded
    at once; supervisor events kept, child events filed under their run."""

    def __init__(self, fd, runs: list[_Run], limits: Limits, language: str = "en"):
        super().__init__(daemon=True)
        self.fd, self.runs, self.limits, self.language = fd, runs, limits, language
        self.supervisor: list[dict] = []
        self.bad_lines = self.oversize_lines = self.items = self.bytes = 0
        self.flooded = False
        self.ready = threading.Event()

    def run(self):
        buffer, dropping = bytearray(), False
        cap = self.limits.line_bytes + 8 * self.limits.output_bytes + 4096
        try:
            while chunk := os.read(self.fd, 1 << 20):
                buffer += chunk
                while (end := buffer.find(b"\n")) >= 0:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    if dropping:
                        dropping = False
                    else:
                        self._line(line)
                if len(buffer) > cap:  # a line longer than any we accept: skip to its end
                    self.oversize_lines += 1
                    buffer.clear()
                    dropping = True
        except OSError:
            pass
        finally:
            self.ready.set()
            os.close(self.fd)

    def _line(self, line: bytes) -> None:
        tag, _, body = line.partition(b"\t")
        if tag == b"Z":
            event = self._parse(body)
            if event is not None:
                self.supervisor.append(event)
                if event.get("event") == "ready":
                    self.ready.set()
            return
        r = int(tag) if tag.isdigit() and len(tag) < 6 else -1
        if not 0 <= r < len(self.runs):
            self.bad_lines += 1
            return
        run = self.runs[r]
        items = body.count(b",") + body.count(b"[") + body.count(b"{")
        run.bytes += len(body)
        self.bytes += len(body)
        if len(body) > self.limits.line_bytes or items > self.limits.line_items \
                or self.bytes > self.limits.submission_bytes \
                or self.items + items > self.limits.submission_items:
            self.flooded = self.flooded or self.bytes > self.limits.submission_bytes
            self._too_large(run, body, len(body), items)
            return
        self.items += items
        event = self._parse(body)
        if event is not None:
            _file_event(run, event, self.language)

    def _parse(self, body: bytes) -> dict | None:
        try:
            event = json.loads(body)
        except Exception:  # malformed, too deep, a 5000-digit number: all just bad lines
            self.bad_lines += 1
            return None
        if type(event) is not dict:
            self.bad_lines += 1
            return None
        return event

    def _too_large(self, run: _Run, body: bytes, size: int, items: int) -> None:
        match = CASE_LINE.match(body[:64])
        i = int(match.group(1)) if match else -1
        if 0 <= i < len(run.positions) and i not in run.outcomes:
            run.outcomes[i] = _too_large_outcome(self.limits, size, items, self.language)


def _too_large_outcome(limits: Limits, size: int, items: int = 0,
                       language: str = "en") -> CaseOutcome:
    return CaseOutcome("too_large", message=message(
        language, "sb_too_large_parts", size=f"{size:,}", items=f"{items:,}",
        line_bytes=f"{limits.line_bytes:,}", line_items=f"{limits.line_items:,}"))


def _file_event(run: _Run, event: dict, language: str = "en") -> None:
    """File one event from a run's child (already parsed, still untrusted); what the
    grader says about it is in ``language``."""
    kind = event.get("event")
    if kind == "case":
        i = _int(event.get("i"), 0, len(run.positions))
        if i is not None and i not in run.outcomes:
            run.outcomes[i] = _case_outcome(event, language)
    elif kind == "too_large":
        i = _int(event.get("i"), 0, len(run.positions))
        size = _int(event.get("bytes"), 0, 1 << 62) or 0
        if i is not None and i not in run.outcomes:
            run.outcomes[i] = CaseOutcome("too_large", message=message(
                language, "sb_too_large", size=f"{size:,}"))
    elif kind == "cell" and len(run.cell_errors) < 100:
        run.cell_errors.append({"index": _int(event.get("index"), -1, 1 << 30),
                                "own": event.get("own") is True,
                                "exercise": _text(event.get("exercise"), 100),
                                "error": _text(event.get("error")),
                                "error_type": _error_type(event.get("error_type"))})
    elif kind == "forbidden" and len(run.forbidden) < 20:
        run.forbidden.append((_text(event.get("module"), 100), _text(event.get("during"), 100)))


def _case_outcome(event: dict, language: str = "en") -> CaseOutcome:
    status, seconds = event.get("status"), _seconds(event.get("seconds"))
    error, error_type = _text(event.get("error")), _error_type(event.get("error_type"))
    if status == "returned":
        try:
            return CaseOutcome("returned", codec.decode(event.get("value")), seconds=seconds)
        except Exception as err:  # CodecError, or anything numpy says about odd arrays
            return CaseOutcome("unencodable", message=message(
                language, "sb_malformed", error=_text(str(err), 300)), seconds=seconds)
    if status in ("not_attempted", "raised", "unencodable", "forbidden", "missing"):
        return CaseOutcome(status, message=error, seconds=seconds, error_type=error_type)
    return CaseOutcome("crashed", message=message(language, "sb_unknown_result"),
                       seconds=seconds)


# ---------------------------------------------------------------- running a submission

def _plan_runs(jobs: list[Job]) -> tuple[list[_Run], list[bytes]]:
    """Every job's public cases as one run, then every job's hidden cases as another:
    a hidden input reaches the sandbox only after every public run is over."""
    encoded = [[c if isinstance(c, dict) else codec.encode((tuple(c[0]), dict(c[1])))
                for c in job.cases] for job in jobs]
    runs, frames = [], []
    for hidden in (False, True):
        for k, job in enumerate(jobs):
            positions = [i for i in range(len(job.cases)) if job.is_hidden(i) == hidden]
            if positions:
                runs.append(_Run(k, positions, hidden))
                frames.append(json.dumps([encoded[k][i] for i in positions],
                                         allow_nan=False).encode())
    return runs, frames


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def _feed(stream, frames: list[bytes]) -> None:
    try:
        for data in frames:
            stream.write(_frame(data))
        stream.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def run_submission(*, cells: list[dict], support: list[str], jobs: list[Job],
                   limits: Limits = Limits(), language: str = "en") -> list[SandboxRun]:
    """Run every job for one submission in one sandbox; one :class:`SandboxRun` per job,
    whose case messages and cell notes are in ``language`` (the sandbox's own notes, for
    the instructor's log, stay in English).

    ``cells`` are the submission's exercise cells in notebook order, each
    ``{"index", "exercise", "source"}``; all of them run in every child (a later
    exercise may call an earlier one's function), but only a job's own cells and
    calls count for its forbidden imports, and other cells get
    ``limits.other_cell_s`` each (one that kills or hangs the child is skipped).
    """
    remove_stale_dirs()
    tmp = tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-")
    os.chmod(tmp, 0o700)
    root, work = os.path.join(tmp, "root"), os.path.join(tmp, "work")
    os.mkdir(root)
    os.mkdir(work)
    uid = _take_uid() if os.geteuid() == 0 else os.geteuid()
    runs, frames = _plan_runs(jobs)
    files = {f"cell_{c['index']:03d}_{c['exercise']}.py"[:120]: c["source"] for c in cells}
    header = {
        "runs": [{"exercise": jobs[run.job].exercise_id, "function": jobs[run.job].function,
                  "forbid": sorted(jobs[run.job].forbid), "wall_s": jobs[run.job].wall_s,
                  "n_cases": len(run.positions), "hidden": run.hidden} for run in runs],
        "cells": cells, "support": support, "uid": uid,
        "unavailable": list(UNAVAILABLE), "hide_packages": list(UNAVAILABLE),
        "preload": [m for m in PRELOAD if m not in {f for j in jobs for f in j.forbid}],
        "hide": [str(PROJECT_ROOT)], "root": root, "workdir": work, "files": files,
        "memory_mb": limits.memory_mb, "file_mb": limits.file_mb, "nproc": limits.nproc,
        "other_cell_s": limits.other_cell_s, "output_bytes": limits.output_bytes,
        "line_bytes": limits.line_bytes, "result_bytes": limits.result_bytes,
        "isolate": limits.isolate,
    }
    read_fd, write_fd = os.pipe()
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-B", str(CHILD), str(write_fd)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            pass_fds=(write_fd,), env=sandbox_env(work), cwd=work, start_new_session=True)
    except BaseException:
        os.close(read_fd)
        _give_uid(uid)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(write_fd)
    err = _BoundedReader(proc.stderr, limits.output_bytes)
    results = _ResultReader(read_fd, runs, limits, language)
    feeder = threading.Thread(target=_feed, args=(proc.stdin, [json.dumps(header).encode(),
                                                              *frames]), daemon=True)
    for thread in (err, results, feeder):
        thread.start()
    budget = sum(jobs[run.job].wall_s + 2.0 for run in runs) + 2.0
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
        ready = next((e for e in results.supervisor if e.get("event") == "ready"), None)
        if os.geteuid() == 0 and (killed or ready is None or ready.get("isolated") is not True):
            kill_uid(uid)
        for thread in (err, results, feeder):
            thread.join(timeout=2.0)
        _give_uid(uid)
        shutil.rmtree(tmp, ignore_errors=True)
    total = time.perf_counter() - started
    startup = ready_at - started if ready is not None else total
    notes = _notes(ready, results)
    return [_job_result(k, job, [r for r in runs if r.job == k], results, limits, notes,
                        err.text(), proc.returncode, startup, killed, language)
            for k, job in enumerate(jobs)]


class _BoundedReader(threading.Thread):
    """Drain a pipe to the end, keeping only the first ``keep`` bytes."""

    def __init__(self, stream, keep):
        super().__init__(daemon=True)
        self.stream, self.keep = stream, keep
        self.head, self.total = bytearray(), 0

    def run(self):
        try:
            while chunk := self.stream.read1(1 << 20):
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


def _notes(ready: dict | None, results: _ResultReader) -> list[str]:
    notes = []
    if ready is not None and type(ready.get("notes")) is list:
        notes += [_text(n, 500) for n in ready["notes"][:5]]
    if results.bad_lines:
        notes.append(f"{results.bad_lines} unreadable line(s) on the result pipe ignored")
    if results.oversize_lines:
        notes.append(f"{results.oversize_lines} over-long line(s) on the result pipe ignored")
    if results.flooded:
        notes.append("the sandbox sent more than the grader reads from one submission; "
                     "the rest was ignored")
    return notes


def run_exercise(*, exercise_id: str, function: str, cells: list[dict], support: list[str],
                 cases: list, forbid: tuple[str, ...] = (), hidden: tuple[bool, ...] = (),
                 limits: Limits = Limits()) -> SandboxRun:
    """Run one exercise in its own sandbox (see :func:`run_submission`)."""
    job = Job(exercise_id, function, cases, tuple(forbid), limits.wall_s, tuple(hidden))
    return run_submission(cells=cells, support=support, jobs=[job], limits=limits)[0]


# ---------------------------------------------------------------- one exercise's result

def describe_exit(code: int | None, language: str = "en") -> str:
    if code is None:
        return message(language, "sb_exit_none")
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
        return message(language, "sb_exit_signal", name=name)
    return message(language, "sb_exit_status", code=code)


HOW_SKIPPED = ("exit", "closed", "cell_timeout", "timeout", "overflow", "cpu")
"""How a cell can fail in a run and be skipped (``sb_how_<how>`` in autograder.messages)."""


def how_failed(how: str, language: str) -> str:
    """What a skipped cell did (``how`` from the supervisor), in words."""
    return message(language, f"sb_how_{how if how in HOW_SKIPPED else 'failed'}")


def _job_result(k: int, job: Job, runs: list[_Run], results: _ResultReader, limits: Limits,
                notes: list[str], stderr: str, exit_code: int | None, startup: float,
                killed: bool, language: str = "en") -> SandboxRun:
    for event in results.supervisor:
        r = _int(event.get("run"), 0, len(results.runs))
        if r is None or results.runs[r].job != k:
            continue
        run = results.runs[r]
        if event.get("event") == "end" and run.end is None:
            run.end = event
        elif event.get("event") == "skipped":
            index = _int(event.get("index"), -1, 1 << 30)
            if index is not None and len(run.skipped) < 100:
                run.skipped[index] = _text(event.get("how"), 20)
        elif event.get("event") == "lost":
            i = _int(event.get("i"), 0, len(run.positions))
            if i is not None:
                status = event.get("status")
                run.lost[i] = describe_exit(status if type(status) is int and
                                            abs(status) < 1 << 16 else None, language)
    result = SandboxRun(outcomes=[CaseOutcome("crashed")] * len(job.cases), stderr=stderr,
                        notes=list(notes), exit_code=exit_code, startup_s=startup)
    for run in runs:
        _fill(result, run, job, limits, killed, language)
    return result


def _fill(result: SandboxRun, run: _Run, job: Job, limits: Limits, killed: bool,
          language: str = "en") -> None:
    end = run.end or {}
    reason = end.get("reason") if run.end else ("timeout" if killed else "gone")
    status = end.get("status")
    status = status if type(status) is int and abs(status) < 1 << 16 else None
    result.total_s += _seconds(end.get("seconds"))
    result.timed_out = result.timed_out or reason in ("timeout", "cpu")
    # another exercise's cell importing a forbidden module costs that exercise, not this one
    result.forbidden += [module for module, during in run.forbidden if during == job.exercise_id]
    result.skipped_cells.update(run.skipped)
    if not run.hidden:
        result.exit_code = status
        result.cell_errors = run.cell_errors
        output = _text(end.get("output"), limits.output_bytes)
        total = _int(end.get("output_total"), 0, 1 << 62) or 0
        if total > len(output.encode()):
            output += f"\n... [{total - len(output.encode())} more bytes not kept]"
        result.stdout = output
    else:
        result.cell_errors = result.cell_errors or [e for e in run.cell_errors if e["own"]]
    kind = message(language, "kind_hidden" if run.hidden else "kind_public")
    for index, how in sorted(run.skipped.items()):
        note = message(language, "sb_skipped", index=index, how=how_failed(how, language),
                       kind=kind)
        if note not in result.cell_notes:
            result.cell_notes.append(note)
    if reason == "gone":
        result.notes.append("the sandbox ended before finishing this exercise")
    for pos, i in enumerate(run.positions):
        if pos in run.outcomes:
            outcome = run.outcomes[pos]
        elif pos in run.lost:
            outcome = CaseOutcome("crashed", message=message(language, "sb_lost",
                                                             exit=run.lost[pos]))
        elif reason in ("timeout", "cpu"):
            limit = message(language, "sb_limit_cpu" if reason == "cpu" else "sb_limit_wall")
            outcome = CaseOutcome("timeout", message=message(
                language, "sb_timeout", limit=limit, seconds=f"{job.wall_s:g}", kind=kind))
        elif reason == "closed":
            outcome = CaseOutcome("crashed", message=message(language, "sb_closed"))
        elif reason == "overflow":
            outcome = CaseOutcome("too_large", message=message(
                language, "sb_overflow", mib=limits.result_bytes // (1 << 20), kind=kind))
        else:
            outcome = CaseOutcome("crashed", message=message(
                language, "sb_died", exit=describe_exit(status, language)))
        result.outcomes[i] = outcome
