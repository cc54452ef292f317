"""``course grade``: grade every new attempt of a term into its one gradebook.

Each lab is prepared once (:func:`autograder.grade.prepare`) and each attempt is
graded by :func:`autograder.grade.grade_notebook`, the same sandboxed grading as
``grade LAB DIR``. What is new: an attempt whose bytes, lab fingerprint or time
differ from what the gradebook holds for it (``--force``: every attempt).

Identical bytes give an identical grade (the submission decides everything the
sandbox sees, and the student id is not part of it), so an attempt whose file is
byte for byte one the gradebook already graded against the same lab fingerprint
copies that grade instead of starting a sandbox; within one run, each distinct
file of a lab is graded once. ``--force`` ignores what the gradebook held
before the run (a regrade), but still grades each distinct file only once.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from tqdm import tqdm

from ..grade import grade_notebook, prepare
from .config import Course
from .layout import Attempt, find_attempts
from .term import TermGradebook


@dataclass
class TermSummary:
    graded: int = 0          # sandboxes run
    copied: int = 0          # attempts recorded from an identical file's grade
    skipped: int = 0         # already up to date
    grader_errors: int = 0
    seconds: float = 0.0
    log: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (f"graded {self.graded}, same file as one graded {self.copied}, already up to "
                f"date {self.skipped}, grader errors {self.grader_errors} "
                f"({self.seconds:.1f} s)")


def _hash(attempt: Attempt) -> str | None:
    try:
        return hashlib.sha256(attempt.path.read_bytes()).hexdigest()
    except OSError:
        return None


def grade_course(course: Course, book: TermGradebook, jobs: int = 1, force: bool = False,
                 progress: bool = True, time_limit: float | None = None, memory_mb: int = 1024,
                 isolate: bool = True) -> TermSummary:
    """Grade what is new in ``course`` into ``book``; see the module docstring."""
    start = time.perf_counter()
    summary = TermSummary()
    attempts, summary.log = find_attempts(course)
    plans = {lab.id: prepare(lab.spec, time_limit=time_limit, memory_mb=memory_mb,
                             isolate=isolate) for lab in course.labs}
    groups: dict[tuple[str, str], list[Attempt]] = defaultdict(list)
    for attempt in attempts:
        digest = _hash(attempt)
        if digest is None:
            summary.log.append(f"{attempt.lab}/{attempt.attempt}: cannot be read; not graded")
            continue
        if not force and book.is_current(attempt, digest, plans[attempt.lab].fingerprint):
            summary.skipped += 1
            continue
        groups[attempt.lab, digest].append(attempt)
    to_run = []
    for (lab, digest), members in groups.items():
        fingerprint = plans[lab].fingerprint
        source = None if force else book.graded_copy(lab, digest, fingerprint)
        if source is None:
            to_run.append((lab, digest, members))
            continue
        for attempt in members:
            book.record_copy(attempt, source, digest, fingerprint)
            summary.copied += 1
    bar = tqdm(total=sum(len(m) for *_, m in to_run), desc="grading the term", unit="attempt",
               disable=not progress, file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(grade_notebook, plans[lab], members[0].path): (lab, digest, members)
                   for lab, digest, members in to_run}
        for future in as_completed(futures):
            lab, digest, members = futures[future]
            try:
                grade = future.result()
            except Exception as err:
                summary.grader_errors += 1
                summary.log.append(f"{lab}/{members[0].attempt}: grader error "
                                   f"{type(err).__name__}: {err}")
                bar.update(len(members))
                continue
            summary.graded += 1
            book.record(members[0], grade)
            copies = members[1:]
            if grade.file_hash != digest:   # the file changed while the run went on
                summary.log.append(f"{lab}/{members[0].attempt}: changed while grading; the "
                                   "attempts with its old content are graded next run")
                copies = []
            for attempt in copies:
                book.record_copy(attempt, (members[0].student, members[0].attempt), digest,
                                 grade.fingerprint)
                summary.copied += 1
            bar.update(len(members))
    bar.close()
    summary.seconds = time.perf_counter() - start
    return summary
