"""Hostile submissions, graded as one batch with -j 2: each is scored for what it
did, and nothing it did touches the other exercises, the other submissions, the
gradebook or the host."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from autograder.grade import grade_batch, prepare
from autograder.gradebook import Gradebook

from .helpers import TOY, full_marks, toy_lab, with_code, write

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="isolation needs root")
FULL = {"scaled_sum": 4.0, "word_counts": 3.0, "unique": 2.0, "pair_total": 1.0}
MARKER = f"/tmp/autograder-escape-{uuid.uuid4().hex}"
SPEC = str(TOY / "spec.py")
PROJECT = TOY.parents[2]
ENGINE = str(PROJECT / "chapters" / "graph" / "ops.py")
RUNTIME = os.path.realpath(sys.base_prefix)  # the Python install the sandbox mounts
VENV = Path(sys.prefix).resolve()
# Inside the sandbox the project tree shows only the path down to the virtual
# environment (when the environment lives in the project), or nothing at all.
PROJECT_SEEN = (f"listed {VENV.relative_to(PROJECT).parts[0]}" if VENV.is_relative_to(PROJECT)
                else "FileNotFoundError")

READ_SECRETS = f'''
import os
def word_counts(text):
    found = {{}}
    places = {{"spec": {SPEC!r}, "engine": {ENGINE!r}, "book": GRADEBOOK,
              "project": {str(PROJECT)!r}, "runtime": {RUNTIME!r}}}
    for name, path in places.items():  # short keys: the report's length must not hang on paths
        try:
            if os.path.isdir(path):
                found[name] = "listed " + ",".join(sorted(os.listdir(path)))
            else:
                with open(path, "rb") as fh:
                    found[name] = "read " + fh.read(200).decode("utf-8", "replace")
        except Exception as err:
            found[name] = type(err).__name__
    return found
'''

WRITE_OUTSIDE = f'''
import os
def unique(xs):
    for path in [{MARKER!r}, {str(TOY / "pwned.txt")!r}, GRADEBOOK + "-pwned", "/pwned"]:
        try:
            with open(path, "w") as fh:
                fh.write("pwned")
        except Exception:
            pass
    return sorted(set(xs))
'''

HOSTILE = {
    "infinite_loop": {"scaled_sum": "def scaled_sum(a, b):\n    while True:\n        pass\n"},
    "sleep_forever": {"word_counts": "import time\ndef word_counts(text):\n"
                                     "    time.sleep(10**6)\n"},
    "fork_bomb": {"unique": "import os\ndef unique(xs):\n    while True:\n        try:\n"
                            "            os.fork()\n        except OSError:\n            pass\n"},
    "alloc_50gb": {"scaled_sum": "import numpy as np\ndef scaled_sum(a, b):\n"
                                 "    return np.ones(50 * 2**30 // 8)\n"},
    "print_100mb": {"word_counts": "import sys\ndef word_counts(text):\n"
                                   "    sys.stdout.write('x' * 100_000_000)\n"
                                   "    counts = {}\n    for w in text.split():\n"
                                   "        counts[w] = counts.get(w, 0) + 1\n    return counts\n"},
    "sys_exit": {"unique": "import sys\ndef unique(xs):\n    sys.exit(0)\n"},
    "os_exit": {"pair_total": "import os\ndef pair_total(a, b):\n    os._exit(0)\n"},
    "raise_systemexit_in_cell": {"word_counts": "raise SystemExit(0)\n"
                                                "def word_counts(text):\n    return {}\n"},
    "keyboard_interrupt": {"scaled_sum": "def scaled_sum(a, b):\n    raise KeyboardInterrupt\n"},
    "patch_numpy_and_builtins": {"scaled_sum": (
        "import builtins\nimport numpy as np\n"
        "def scaled_sum(a, b):\n"
        "    np.allclose = np.isclose = np.array_equal = lambda *a, **k: True\n"
        "    builtins.len = lambda x: 0\n"
        "    return 0.0\n")},
    "lying_eq": {"unique": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n"
        "    __lt__ = __gt__ = __le__ = __ge__ = __eq__\n    __hash__ = object.__hash__\n"
        "def unique(xs):\n    return Yes()\n")},
    "lying_ndarray": {"scaled_sum": (
        "import numpy as np\nclass Liar(np.ndarray):\n"
        "    def __eq__(self, other):\n        return True\n"
        "def scaled_sum(a, b):\n"
        "    return np.zeros(np.broadcast(np.asarray(a), np.asarray(b)).shape).view(Liar)\n")},
    "fake_results_json": {"pair_total": (
        "import os, sys, json\n"
        "def pair_total(a, b):\n"
        "    line = json.dumps({'event': 'case', 'i': 0, 'status': 'passed', 'value': 30.0})\n"
        "    print(line)\n"
        "    for fd in range(3, 1024):\n"
        "        try:\n"
        "            os.write(fd, ('0\\t' + line + '\\nZ\\t' + line + '\\n').encode())\n"
        "        except OSError:\n"
        "            pass\n"
        "    return -1.0\n")},
    "read_secrets": {"word_counts": READ_SECRETS},
    "write_outside": {"unique": WRITE_OUTSIDE},
    "forbidden_importlib": {"scaled_sum": (
        "import importlib\ndef scaled_sum(a, b):\n"
        "    importlib.import_module('to' + 'rch')\n    return 2.0 * a + b\n")},
    "forbidden_dunder_import": {"scaled_sum": (
        "def scaled_sum(a, b):\n    t = __import__('torch')\n    return 2.0 * a + b\n")},
    "syntax_error": {"word_counts": "def word_counts(text)\n    return {}\n"},
}

# exercise -> (score, status of its cases) for the hostile exercise of each submission
EXPECTED = {
    "infinite_loop": ("scaled_sum", 0.0, {"timeout"}),
    "sleep_forever": ("word_counts", 0.0, {"timeout"}),
    "fork_bomb": ("unique", 0.0, {"timeout"}),
    "alloc_50gb": ("scaled_sum", 0.0, {"error"}),
    "print_100mb": ("word_counts", 3.0, {"passed"}),
    "sys_exit": ("unique", 0.0, {"error"}),
    "os_exit": ("pair_total", 0.0, {"crashed"}),
    "raise_systemexit_in_cell": ("word_counts", 0.0, {"error"}),
    "keyboard_interrupt": ("scaled_sum", 0.0, {"error"}),
    "patch_numpy_and_builtins": ("scaled_sum", 0.0, {"failed"}),
    "lying_eq": ("unique", 0.0, {"error"}),
    "lying_ndarray": ("scaled_sum", 0.0, {"failed"}),
    "fake_results_json": ("pair_total", 0.0, {"failed"}),
    "read_secrets": ("word_counts", 0.0, {"failed"}),
    "write_outside": ("unique", 2.0, {"passed"}),
    "forbidden_importlib": ("scaled_sum", 0.0, {"forbidden_import"}),
    "forbidden_dunder_import": ("scaled_sum", 0.0, {"forbidden_import"}),
    "syntax_error": ("word_counts", 0.0, {"error"}),
}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    subs = tmp_path_factory.mktemp("hostile")
    book_path = tmp_path_factory.mktemp("grades") / "gradebook.sqlite3"
    for name, replace in HOSTILE.items():
        replace = {k: v.replace("GRADEBOOK", repr(str(book_path))) for k, v in replace.items()}
        write(with_code(replace), subs / f"{name}.ipynb")
    write(full_marks(), subs / "honest.ipynb")
    raw = (subs / "honest.ipynb").read_text()
    (subs / "truncated.ipynb").write_text(raw[: len(raw) // 2])
    (subs / "not_a_notebook.ipynb").write_text("[1, 2, 3]")
    (subs / "non_utf8.ipynb").write_bytes(raw.replace("Toy lab", "Toy lab \udcff", 1)
                                          .encode("utf-8", "surrogateescape"))
    write(with_code(drop=("unique",)), subs / "deleted_cell.ipynb")
    write(with_code(duplicate={"scaled_sum": "def scaled_sum(a, b):\n    return 0.0\n"}),
          subs / "duplicated_cell.ipynb")
    plan = prepare(toy_lab(), time_limit=3.0)
    start = time.perf_counter()
    with Gradebook(book_path) as book:
        summary = grade_batch(plan, sorted(subs.glob("*.ipynb")), book, jobs=2, progress=False)
    summary.wall = time.perf_counter() - start
    grades = {g.student: g for g in summary.grades}
    return summary, grades, book_path


def _scores(grade):
    return {e.exercise: e.score for e in grade.exercises}


def test_the_batch_itself_did_not_fail(batch):
    summary, grades, _ = batch
    assert summary.grader_errors == 0, summary.log
    assert len(grades) == len(HOSTILE) + 6
    timed_out = sorted(g.student for g in summary.grades if any(e.timed_out for e in g.exercises))
    assert timed_out == ["fork_bomb", "infinite_loop", "sleep_forever"]
    assert summary.failed_to_run == 2        # truncated, not a notebook


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_exercise_is_scored_for_what_it_did_and_the_rest_is_untouched(batch, name):
    _, grades, _ = batch
    exercise, score, statuses = EXPECTED[name]
    grade = grades[name]
    by_id = {e.exercise: e for e in grade.exercises}
    got = by_id[exercise]
    assert got.score == score, (got.status, got.message, [(c.name, c.status, c.message)
                                                          for c in got.cases])
    assert {c.status for c in got.cases} <= statuses, [(c.status, c.message) for c in got.cases]
    others = {k: v for k, v in _scores(grade).items() if k != exercise}
    assert others == {k: v for k, v in FULL.items() if k != exercise}


def test_honest_submission_in_the_same_batch_gets_full_marks(batch):
    assert _scores(batch[1]["honest"]) == FULL


def test_messages_say_what_happened(batch):
    _, grades, _ = batch
    msg = {name: " ".join(c.message for e in grades[name].exercises for c in e.cases)
           for name in grades}
    assert "wall-clock limit of 3 s" in msg["infinite_loop"]
    assert "MemoryError" in msg["alloc_50gb"]
    assert "SystemExit" in msg["sys_exit"]
    assert "SystemExit" in msg["raise_systemexit_in_cell"]
    assert "KeyboardInterrupt" in msg["keyboard_interrupt"]
    assert "cannot be sent back" in msg["lying_eq"]
    assert "forbids" in msg["forbidden_importlib"] and "torch" in msg["forbidden_importlib"]
    assert "SyntaxError" in msg["syntax_error"]
    assert "not a valid notebook" in msg["truncated"]
    assert "no cell tagged as exercise 'unique'" in msg["deleted_cell"]


def test_printing_100mb_is_captured_truncated(batch):
    word_counts = next(e for e in batch[1]["print_100mb"].exercises if e.exercise == "word_counts")
    assert len(word_counts.stdout) < 10_000
    assert "more bytes not kept" in word_counts.stdout


def test_broken_files_grade_as_zero_with_a_reason(batch):
    _, grades, _ = batch
    for name in ("truncated", "not_a_notebook"):
        assert grades[name].status == "invalid_submission"
        assert grades[name].score == 0
    assert _scores(grades["non_utf8"]) == FULL
    assert any("not valid UTF-8" in n for n in grades["non_utf8"].notes)
    assert _scores(grades["duplicated_cell"]) == FULL
    assert any("appears in 2 cells" in n for n in grades["duplicated_cell"].notes)


@ROOT_ONLY
def test_the_child_cannot_see_the_spec_the_engine_the_gradebook_or_the_project(batch):
    _, grades, book_path = batch
    word_counts = next(e for e in grades["read_secrets"].exercises if e.exercise == "word_counts")
    seen = " ".join(str(c.detail) for c in word_counts.cases if c.detail)
    for name in ("spec", "engine", "book"):
        assert f"'{name}': 'FileNotFoundError'" in seen, seen
    # Only the read-only runtime is mounted: the project tree shows nothing but the
    # path down to the virtual environment's site-packages.
    assert f"'project': '{PROJECT_SEEN}'" in seen, seen
    assert "'runtime': 'listed " in seen, seen
    assert "LabSpec" not in seen and "register_op" not in seen


@ROOT_ONLY
def test_writes_outside_the_working_directory_never_reach_the_host(batch):
    _, _, book_path = batch
    assert not os.path.exists(MARKER)
    assert not (TOY / "pwned.txt").exists()
    assert not os.path.exists(str(book_path) + "-pwned")
    assert not os.path.exists("/pwned")


@ROOT_ONLY
def test_no_process_of_the_sandbox_user_outlives_the_batch(batch):
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-u", "65534"], capture_output=True, text=True).stdout
    assert left.strip() == "", f"processes of uid nobody still running: {left}"


def test_the_gradebook_holds_every_submission(batch):
    _, grades, book_path = batch
    with Gradebook(book_path) as book:
        stored = {s["student"]: s["score"] for s in book.students("toy_lab")}
    assert stored == {name: g.score for name, g in grades.items()}
