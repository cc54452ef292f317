"""The trusted side against submissions that attack it rather than the host: each
finding of the autograder review as a hostile sample, graded in one batch with
-j 2 among honest submissions. Whatever a submission does, the grader exits
cleanly, every submission gets its rows, hidden inputs never come back, and one
bad cell costs one exercise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.grade import grade_batch, prepare
from autograder.gradebook import Gradebook
from autograder.sandbox import UID_BASE, UID_COUNT, remove_stale_dirs

from .helpers import TOY, full_marks, toy_lab, with_code, write

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="isolation needs root")
FULL = {"scaled_sum": 4.0, "word_counts": 3.0, "unique": 2.0, "pair_total": 1.0}
SECRET = "the cat saw the other cat"        # the toy lab's hidden word_counts input
PROJECT = TOY.parents[2]

# Writes one raw line, as if it were the result of case 0, to every descriptor the
# child may hold; the real result comes second and is ignored (the first one wins).
POISON = '''
import os
def _poison(line):
    for fd in range(3, 64):
        try:
            os.write(fd, (line + "\\n").encode())
        except OSError:
            pass
'''


def _poisoned(body: str) -> str:
    return POISON + textwrap.dedent(f'''
    import numpy as np
    def scaled_sum(a, b):
        _poison({body!r})
        return 2.0 * np.asarray(a, dtype=np.float64) + b
    ''')


DAEMONS = textwrap.dedent('''
    import os, signal, time
    def _daemon():
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:              # double fork: the grandchild is orphaned
                for _ in range(3000):
                    try:
                        os.kill(-1, signal.SIGKILL)    # every process it may signal
                    except OSError:
                        pass
                    for name in os.listdir("/tmp"):
                        try:
                            open(os.path.join("/tmp", name, "pwned"), "w").close()
                        except OSError:
                            pass
                    time.sleep(0.01)
            os._exit(0)
    _daemon()
    def unique(xs):
        _daemon()
        return sorted(set(xs))
    ''')


FINDINGS = {
    # 1. the in-process guard switched off, then torch under a computed name
    "guard_disabled": {"scaled_sum": textwrap.dedent('''
        import sys
        def scaled_sum(a, b):
            for finder in sys.meta_path:
                if hasattr(finder, "forbidden"):
                    finder.forbidden.clear()
            import builtins
            t = builtins.__import__("to" + "rch")
            return (t.as_tensor(a, dtype=t.float64) * 2 + t.as_tensor(b)).numpy()
        ''')},
    # 2a. printing the inputs; 2b. searching the process for any case's inputs
    "print_inputs": {"word_counts": textwrap.dedent('''
        def word_counts(text):
            print("INPUT:", text)
            counts = {}
            for w in text.split():
                counts[w] = counts.get(w, 0) + 1
            return counts
        ''')},
    "search_memory": {"word_counts": textwrap.dedent('''
        import gc, sys
        def word_counts(text):
            needle = " ".join(["saw", "the", "other"])   # not spelled out in this source
            gc.collect()                   # an earlier call's frame-locals cycle, say
            found = set()
            for obj in gc.get_objects():
                for item in (obj.values() if isinstance(obj, dict) else
                             obj if isinstance(obj, (list, tuple)) else ()):
                    if isinstance(item, str) and item is not needle and needle in item:
                        found.add(item[:200])
            frame = sys._getframe()
            while frame is not None:
                for value in frame.f_locals.values():
                    if isinstance(value, (bytes, list)) and needle in repr(value):
                        found.add(repr(value)[:300])
                frame = frame.f_back
            return {"found": len(found), "texts": sorted(found)}
        ''')},
    "hidden_exception_text": {"word_counts": textwrap.dedent('''
        def word_counts(text):
            if text.count(" ") > 3:
                raise type("Leak_" + text.replace(" ", "_"), (Exception,), {})(text)
            if text.count(" ") > 1:
                raise ValueError(text)
            counts = {}
            for w in text.split():
                counts[w] = counts.get(w, 0) + 1
            return counts
        ''')},
    # 3. values the trusted side must not choke on
    "array_65_dims": {"scaled_sum": _poisoned(json.dumps(
        {"event": "case", "i": 0, "status": "returned", "seconds": 0.1,
         "value": {"$array": {"dtype": "<f8", "shape": [1] * 65, "data": "AAAAAAAA8D8="}}}))},
    "bad_dtype": {"scaled_sum": _poisoned(json.dumps(
        {"event": "case", "i": 0, "status": "returned",
         "value": {"$array": {"dtype": "i4 (2,3)", "shape": [1], "data": "AAAAAA=="}}}))},
    "huge_ints": {"scaled_sum": _poisoned(
        '{"event":"case","i":0,"status":"returned","value":' + "9" * 4200
        + ',"seconds":' + "9" * 4200 + "}")},
    "huger_ints": {"scaled_sum": _poisoned(
        '{"event":"case","i":0,"status":"returned","value":' + "9" * 6000 + "}")},
    "deep_expression": {"scaled_sum": "_x = " + "-" * 3000 + "1\n"
                        "def scaled_sum(a, b):\n    return 2.0 * a + b\n"},
    # 4. a flood of nested empty lists on the result pipe, in every exercise
    "flood": {eid: POISON + textwrap.dedent(f'''
        def {fn}(*args):
            _poison('{{"event":"case","i":0,"status":"returned","value":[' + '[],' * 20_000_000
                    + '[]]}}')
            return None
        ''') for eid, fn in (("scaled_sum", "scaled_sum"), ("word_counts", "word_counts"),
                              ("unique", "unique"), ("pair_total", "pair_total"))},
    # 5. the top level of one exercise's cell breaks the process
    "cell_os_exit": {"unique": "import os\nos._exit(3)\ndef unique(xs):\n    return []\n"},
    "cell_segfault": {"unique": "import ctypes\nctypes.string_at(0)\n"},
    "cell_closes_fds": {"unique": "import os\nos.closerange(0, 1024)\n"
                                  "def unique(xs):\n    return sorted(set(xs))\n"},
    "cell_sigstop": {"unique": "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n"},
    "cell_ignores_signals": {"unique": (
        "import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):\n"
        "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass\n")},
    "cell_swallows_timeout": {"unique": (
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        pass\n")},
    # 6. daemons (setsid, double fork) that kill whatever they may signal
    "daemons": {"unique": DAEMONS},
    # 8. a value too large to send back, and one that runs out of memory encoding
    "too_large": {"unique": "def unique(xs):\n    return list(range(400_000))\n"},
}
# ... and one that runs out of memory encoding its 416 MB result: graded on its own
# with a roomy time limit, so a loaded machine cannot turn the memory cap into a timeout.
ENCODE_OOM = {"unique": "import numpy as np\ndef unique(xs):\n    return np.ones(52_000_000)\n"}


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    subs = tmp_path_factory.mktemp("findings")
    book_path = tmp_path_factory.mktemp("grades") / "gradebook.sqlite3"
    for name, replace in FINDINGS.items():
        write(with_code(replace), subs / f"{name}.ipynb")
    for k in range(3):
        write(full_marks(), subs / f"zz_honest_{k}.ipynb")
    plan = prepare(toy_lab(), time_limit=3.0)
    with Gradebook(book_path) as book:
        summary = grade_batch(plan, sorted(subs.glob("*.ipynb")), book, jobs=2, progress=False)
    return summary, {g.student: g for g in summary.grades}, book_path


def _exercise(grade, eid):
    return next(e for e in grade.exercises if e.exercise == eid)


def _scores(grade):
    return {e.exercise: e.score for e in grade.exercises}


def test_every_submission_is_graded_and_the_batch_did_not_fail(batch):
    summary, grades, book_path = batch
    assert summary.grader_errors == 0, summary.log
    assert set(grades) == set(FINDINGS) | {f"zz_honest_{k}" for k in range(3)}
    with Gradebook(book_path) as book:
        assert {s["student"] for s in book.students("toy_lab")} == set(grades)
    for k in range(3):
        assert _scores(grades[f"zz_honest_{k}"]) == FULL


@ROOT_ONLY
def test_a_disabled_import_guard_still_finds_no_torch(batch):
    scaled = _exercise(batch[1]["guard_disabled"], "scaled_sum")
    assert scaled.score == 0.0
    assert {c.status for c in scaled.cases} == {"error"}
    assert "ModuleNotFoundError" in scaled.cases[0].message


def test_output_printed_during_hidden_cases_is_never_kept(batch):
    words = _exercise(batch[1]["print_inputs"], "word_counts")
    assert words.score == 3.0
    assert "INPUT: a b a" in words.stdout          # the public case's print is feedback
    assert SECRET not in words.stdout


def test_a_public_run_holds_no_hidden_input_anywhere_in_its_memory(batch):
    words = _exercise(batch[1]["search_memory"], "word_counts")
    public = [c for c in words.cases if not c.hidden]
    shown = " ".join(str(c.detail) for c in public)
    assert "'found': 0" in shown, shown            # the search ran and found nothing
    assert "saw the" not in shown
    for case in words.cases:
        assert SECRET not in case.message


def test_hidden_errors_report_only_a_builtin_class(batch):
    words = _exercise(batch[1]["hidden_exception_text"], "word_counts")
    hidden = next(c for c in words.cases if c.hidden)
    assert hidden.status == "error"
    assert hidden.message == "raised an exception class of its own"
    assert SECRET.replace(" ", "_") not in hidden.message + hidden.error_type
    assert hidden.detail is None


@pytest.mark.parametrize("name", ["array_65_dims", "bad_dtype", "huge_ints", "deep_expression"])
def test_malformed_results_score_zero_for_that_case_only(batch, name):
    grade = batch[1][name]
    scaled = _exercise(grade, "scaled_sum")
    first = scaled.cases[0]
    if name == "deep_expression":   # it parses nowhere, so the exercise cell itself fails
        assert scaled.score == 0.0 and "RecursionError" in scaled.message
    else:
        assert first.score == 0.0 and first.status in ("error", "failed"), first
        # the first public and the first hidden case are poisoned; the others still count
        assert scaled.score == pytest.approx(4.0 * (1 - 1 / 5 - 2 / 5))
    assert {k: v for k, v in _scores(grade).items() if k != "scaled_sum"} == {
        k: v for k, v in FULL.items() if k != "scaled_sum"}


def test_a_line_that_is_not_json_is_ignored_and_the_real_result_counts(batch):
    grade = batch[1]["huger_ints"]      # a 6000-digit number: Python's json refuses it
    assert _scores(grade) == FULL
    assert any("unreadable line" in n for e in grade.exercises for n in e.sandbox_notes)


def test_a_result_flood_is_cut_off_and_scores_zero(batch):
    grade = batch[1]["flood"]
    assert grade.score == 0.0       # case 0 of each run is flooded, the others return None
    for ex in grade.exercises:
        assert ex.cases[0].status == "too_large", ex.cases[0]
        assert "too large" in ex.cases[0].message


@pytest.mark.parametrize("name", ["cell_os_exit", "cell_segfault", "cell_closes_fds",
                                  "cell_sigstop", "cell_ignores_signals",
                                  "cell_swallows_timeout"])
def test_a_cell_that_breaks_the_process_costs_only_its_own_exercise(batch, name):
    grade = batch[1][name]
    assert _scores(grade) == {**FULL, "unique": 0.0}
    others = [e for e in grade.exercises if e.exercise != "unique"]
    assert all(any("skipped" in n for n in e.message.splitlines()) for e in others), \
        [e.message for e in others]


def test_results_over_the_caps_say_so(batch):
    unique = _exercise(batch[1]["too_large"], "unique")
    assert [c.status for c in unique.cases] == ["too_large", "too_large"]
    assert "too large to grade" in unique.cases[0].message


def test_a_result_that_runs_out_of_memory_encoding_says_so(tmp_path):
    write(with_code(ENCODE_OOM), tmp_path / "encode_oom.ipynb")
    with Gradebook(tmp_path / "gradebook.sqlite3") as book:
        summary = grade_batch(prepare(toy_lab(), time_limit=60.0), [tmp_path / "encode_oom.ipynb"],
                              book, jobs=1, progress=False)
    oom = _exercise(summary.grades[0], "unique")
    assert oom.score == 0.0
    assert "ran out of memory" in oom.cases[0].message or "MemoryError" in oom.cases[0].message


def test_the_gradebook_holds_no_hidden_value_or_message(batch):
    _, _, book_path = batch
    with Gradebook(book_path) as book:
        rows = book.db.execute("SELECT message, detail FROM cases WHERE hidden=1").fetchall()
    text = " ".join(str(r) for r in rows)
    assert rows and all(detail is None for _, detail in rows)
    for leak in (SECRET, "'the': 2", "Leak_", "INPUT"):
        assert leak not in text


@ROOT_ONLY
def test_no_process_of_a_sandbox_uid_outlives_the_batch(batch):
    assert _sandbox_processes() == []


def _sandbox_processes() -> list[str]:
    left = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            status = Path(f"/proc/{name}/status").read_text()
        except OSError:
            continue
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        if UID_BASE <= uid < UID_BASE + UID_COUNT or uid == 65534:
            left.append(f"{name} (uid {uid})")
    return left




@ROOT_ONLY
def test_without_namespaces_no_descendant_survives_or_hurts_the_next_student(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    write(with_code({"unique": DAEMONS}), subs / "a_daemons.ipynb")
    for k in range(4):
        write(full_marks(), subs / f"b_honest_{k}.ipynb")
    plan = prepare(toy_lab(), time_limit=3.0, isolate=False)
    with Gradebook(tmp_path / "gb.sqlite3") as book:
        summary = grade_batch(plan, sorted(subs.glob("*.ipynb")), book, jobs=2, progress=False)
    grades = {g.student: g for g in summary.grades}
    assert summary.grader_errors == 0 and len(grades) == 5
    for k in range(4):
        assert _scores(grades[f"b_honest_{k}"]) == FULL
    assert _sandbox_processes() == []


def test_leftover_folders_of_a_killed_grader_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"autograder-{dead.pid}-abc"
    (stale / "work").mkdir(parents=True)
    mine = tmp_path / f"autograder-{os.getpid()}-def"
    mine.mkdir()
    other = tmp_path / "autograder-notapid"
    other.mkdir()
    assert remove_stale_dirs(str(tmp_path)) == [stale.name]
    assert not stale.exists() and mine.exists() and other.exists()


GRADER_MEMORY = textwrap.dedent('''
    import resource, sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from autograder.grade import grade_batch, prepare
    from autograder.gradebook import Gradebook
    from autograder.spec import load_lab
    plan = prepare(load_lab(Path({toy!r})), time_limit=3.0)
    subs = sorted(Path({subs!r}).glob("*.ipynb"))
    with Gradebook({book!r}) as book:
        grade_batch(plan, subs[:1], book, jobs=2, progress=False, force=True)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        summary = grade_batch(plan, subs, book, jobs=2, progress=False, force=True)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(before, after, summary.graded, summary.grader_errors)
    ''')


@pytest.mark.slow
def test_the_grader_memory_stays_bounded_under_a_result_flood(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    write(full_marks(), subs / "a_honest.ipynb")
    for k in range(2):
        write(with_code(FINDINGS["flood"]), subs / f"flood_{k}.ipynb")
    script = GRADER_MEMORY.format(root=str(PROJECT), toy=str(TOY), subs=str(subs),
                                  book=str(tmp_path / "gb.sqlite3"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    before, after, graded, errors = map(int, out.stdout.split())
    assert (graded, errors) == (3, 0)
    grown_mib = (after - before) / 1024
    print(f"grader peak RSS {before / 1024:.0f} MiB after an honest submission, "
          f"{after / 1024:.0f} MiB after two result floods at -j 2")
    assert grown_mib < 512
