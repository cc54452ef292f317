"""The autograder speaks the lab notebook's language beyond ``check``: where two values
differ (summarize.mismatch, compare), the grader's messages, the exported feedback,
the Gradescope results and the class report. A toy lab released with ``--lang zh``
is graded in Chinese with no extra option; English stays as it was."""

from __future__ import annotations

import collections
import html
import json
import re
import shutil

import jsonschema
import nbformat
import numpy as np
import pytest

from autograder import gradescope
from autograder.check import run_check
from autograder.compare import compare
from autograder.export import export
from autograder.grade import grade_notebook, prepare, submission_language
from autograder.gradebook import Gradebook
from autograder.gradescope_schema import RESULTS_SCHEMA
from autograder.release import release
from autograder.report import class_language, class_summary, report_html
from autograder.spec import load_lab
from autograder.summarize import mismatch

from . import class_gradebook
from .helpers import TOY, full_marks, toy_lab, with_code, write

CHINESE_CHAR = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_WORDS = re.compile(r"\b(expected|got|differ|differs|missing|unexpected|items|"
                           r"elements|shape|order|passed|failed|wrong|hidden|public|"
                           r"cases?|students?)\b")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@pytest.fixture(autouse=True)
def _english(english_by_default):
    """Each test starts and ends with no language chosen (English)."""


# ---------------------------------------------------------------- where values differ

DIFFERENCES = [
    (np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.5, 3.0, 9.0]), "allclose"),
    (np.zeros((2, 3)), np.zeros((3, 2)), "allclose"),
    (np.zeros(2, bool), np.zeros(2), "allclose"),
    (np.arange(10.0), np.arange(10.0) + 1, "allclose"),
    (1.0, 1.5, "allclose"),
    ([1, 2], [1], "allclose"),
    ({"a": 1}, {"b": 1}, "allclose"),
    ("a", None, "allclose"),
    ([1, [2.0, 3.0]], [1, "x"], "allclose"),
    ({"grad": np.ones(3)}, {"grad": np.array([1.0, 0.0, 1.0])}, "equal"),
    ([3, 1, 2], [1, 2, 2, 4], "set"),
    ([3, 1, 2], 7, "set"),
]


def _numbers(text: str) -> collections.Counter:
    return collections.Counter(NUMBER.findall(text))


@pytest.mark.parametrize("expected, got, mode", DIFFERENCES)
def test_a_difference_reads_in_chinese_with_the_same_numbers(expected, got, mode):
    exact = mode == "equal"
    texts = {}
    for language in ("en", "zh"):
        found = compare(expected, got, mode, language=language)
        assert not found.ok
        texts[language] = [found.message]
        if mode != "set":
            texts[language].append(mismatch(expected, got, 0 if exact else 1e-6,
                                            0 if exact else 1e-8, language=language))
    for english, chinese in zip(texts["en"], texts["zh"], strict=True):
        assert ENGLISH_WORDS.search(english), english
        assert CHINESE_CHAR.search(chinese) and not ENGLISH_WORDS.search(chinese), chinese
        assert _numbers(chinese) == _numbers(english), (english, chinese)


def test_a_custom_comparisons_own_message_is_kept_and_its_default_translated():
    assert compare(1, 2, lambda e, g: (False, "my words"), language="zh").message == "my words"
    assert compare(1, 2, lambda e, g: False, language="zh").message == "自定义比较未通过"


def test_check_of_a_wrong_answer_shows_the_chinese_difference():
    def triple(a, b):
        return np.asarray(a, dtype=np.float64) * 3.0

    report = run_check("scaled_sum", TOY, {"scaled_sum": triple}, lang="zh")
    failed = [r for r in report.results if r.status == "failed"]
    assert failed and all("个元素中有" in r.message or r.message.startswith("期望")
                          for r in failed), [r.message for r in failed]
    assert not any(ENGLISH_WORDS.search(r.message) for r in failed)
    english = run_check("scaled_sum", TOY, {"scaled_sum": triple})
    assert [r.message for r in english.results if r.status == "failed"] == [
        "expected 4.0, got 3.0 (rtol=1e-06, atol=1e-09)",
        "3 of 3 elements differ; at [0]: expected 2.5, got 3.0; at [1]: expected 4.5, got 6.0; "
        "at [2]: expected 6.5, got 9.0 (rtol=1e-06, atol=1e-09)"]


# ---------------------------------------------------------------- a lab released in Chinese

WRONG_COUNTS = "def word_counts(text):\n    return {'x': 1}\n"


@pytest.fixture(scope="module")
def chinese_release(tmp_path_factory):
    """The toy lab with a Chinese edition (its source copied as source.zh.ipynb, as
    tools/i18n.py would generate it), released with language="zh"."""
    folder = tmp_path_factory.mktemp("zh_lab")
    lab_dir = shutil.copytree(TOY, folder / "toy_lab")
    shutil.copy(lab_dir / "source.ipynb", lab_dir / "source.zh.ipynb")
    lab = load_lab(lab_dir)
    out = release(lab, folder / "release", language="zh")
    return lab, out / f"{lab.id}.ipynb"


@pytest.fixture(scope="module")
def graded(chinese_release, tmp_path_factory):
    """Two students of the Chinese release (one wrong answer, one full marks) and one of
    the English source, graded into one gradebook and exported."""
    lab, released = chinese_release
    folder = tmp_path_factory.mktemp("graded")
    chinese = nbformat.read(released, as_version=4)
    solved = full_marks()
    solved.metadata["autograder"] = dict(chinese.metadata["autograder"])
    subs = {"li": with_code({"word_counts": WRONG_COUNTS}, base=solved), "wang": solved,
            "ann": with_code({"word_counts": WRONG_COUNTS})}
    plan = prepare(lab)
    grades = {name: grade_notebook(plan, write(nb, folder / f"{name}.ipynb"))
              for name, nb in subs.items()}
    book_path = folder / "gradebook.sqlite3"
    with Gradebook(book_path) as book:
        for grade in grades.values():
            book.record(lab.id, grade)
        export(book, lab, folder / "out")
        summary = class_summary(book, lab)
    return grades, folder / "out" / "feedback", summary


def _case(grade, exercise, name):
    ex = next(e for e in grade.exercises if e.exercise == exercise)
    return next(c for c in ex.cases if c.name == name)


def test_the_released_notebook_names_its_language_and_the_grader_reads_it(chinese_release):
    assert submission_language(nbformat.read(chinese_release[1], as_version=4)) == "zh"
    assert submission_language(full_marks()) == "en"
    assert submission_language({"metadata": {"autograder": {"language": "fr"}}}) == "en"


def test_a_chinese_submission_is_graded_in_chinese(graded):
    grades, _, _ = graded
    li, ann = grades["li"], grades["ann"]
    assert (li.language, ann.language) == ("zh", "en")
    public = _case(li, "word_counts", "two_words")
    assert public.message.startswith("结果错误：") and "缺少键" in public.message
    assert _case(li, "word_counts", "secret_sentence").message == "结果错误"
    assert _case(ann, "word_counts", "two_words").message.startswith("wrong result: ")
    assert _case(ann, "word_counts", "secret_sentence").message == "wrong result"


def test_chinese_feedback_for_a_chinese_submission_only(graded):
    _, feedback, _ = graded
    for suffix in ("md", "html"):
        chinese = html.unescape((feedback / f"li.{suffix}").read_text(encoding="utf-8"))
        english = html.unescape((feedback / f"ann.{suffix}").read_text(encoding="utf-8"))
        for words in ("的反馈", "总分：", "公开测试用例：2 个中通过 0 个。",
                      "第一个未通过的公开测试用例", "隐藏测试用例（只显示名称和结果）：",
                      "结果错误：缺少键 ['a', 'b']；多出键 ['x']", "期望", "实际"):
            assert words in chinese, (suffix, words)
        for words in ("feedback for", "Total:", "Public cases:", "First failing",
                      "Hidden cases", "expected"):
            assert words not in chinese and words in english, (suffix, words)
        assert not CHINESE_CHAR.search(english)
    assert "<html lang='zh-CN'>" in (feedback / "li.html").read_text(encoding="utf-8")
    assert (feedback / "wang.md").read_text(encoding="utf-8").count("全部 ") == 4


def test_gradescope_results_speak_the_submissions_language_with_gradescopes_schema(graded):
    grades, _, _ = graded
    validator = jsonschema.Draft202012Validator(RESULTS_SCHEMA)
    chinese = gradescope.results_for(grades["li"], 1.0)
    english = gradescope.results_for(grades["ann"], 1.0)
    for results in (chinese, english):
        assert not list(validator.iter_errors(results))
    assert [(t["status"], t["visibility"], t["max_score"]) for t in chinese["tests"]] == \
        [(t["status"], t["visibility"], t["max_score"]) for t in english["tests"]]
    by_name = {t["name"]: t for t in chinese["tests"]}
    assert by_name["word_counts: secret_sentence（隐藏）"]["output"] == "隐藏测试用例：未通过"
    public = by_name["word_counts: two_words"]["output"]
    assert public.startswith("未通过：结果错误：") and "\n期望：{'a': 2, 'b': 1}" in public
    assert "word_counts：2 个公开测试用例中通过 0 个；1 个隐藏测试用例：成绩发布时显示它们的结果" \
        in chinese["output"]
    assert not CHINESE_CHAR.search(json.dumps(english, ensure_ascii=False))


def test_gradescope_run_grades_a_chinese_release_in_chinese(chinese_release, tmp_path):
    lab, released = chinese_release
    sub = tmp_path / "submission"
    sub.mkdir()
    shutil.copy(released, sub / "lab.ipynb")
    assert gradescope.run(str(lab.source.parent), sub, tmp_path / "results.json") == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["score"] == 0
    assert all(t["output"].startswith(("未作答", "隐藏测试用例：未作答"))
               for t in results["tests"]), [t["output"] for t in results["tests"]]


def test_the_class_report_speaks_the_classs_language(graded):
    _, _, summary = graded
    assert summary.language == "zh"            # two of the three submissions are Chinese
    page = report_html(summary)
    assert "<html lang='zh-CN'>" in page and "<title>班级报告：" in page
    for words in ("<h2>分数分布</h2>", "<h2>通过率</h2>", "<h2>最常见的失败信息</h2>",
                  "<th scope='col'>练习</th>", "<th scope='col'>通过率</th>",
                  "共 3 份提交。", "最难的练习：word_counts"):
        assert words in page, words
    for words in ("Score distribution", "Pass rates", "scope='col'>exercise<", "submissions."):
        assert words not in page, words


def test_the_class_language_is_the_majoritys_and_english_on_a_tie():
    assert class_language([{"language": "zh"}, {"language": "zh"}, {"language": "en"}]) == "zh"
    assert class_language([{"language": "zh"}, {"language": None}]) == "en"
    assert class_language([]) == "en"


def test_an_english_gradebook_keeps_the_english_report(tmp_path):
    book_path = class_gradebook.build(tmp_path / "gradebook.sqlite3")
    with Gradebook(book_path) as book:
        summary = class_summary(book, toy_lab())
    assert summary.language == "en"
    assert "<h2>Score distribution</h2>" in report_html(summary)


LOOPS = "def scaled_sum(a, b):\n    while True:\n        pass\n"


def test_the_sandbox_says_a_chinese_submission_timed_out_in_chinese(chinese_release, tmp_path):
    lab, released = chinese_release
    chinese = nbformat.read(released, as_version=4)
    looping = with_code({"scaled_sum": LOOPS})
    looping.metadata["autograder"] = dict(chinese.metadata["autograder"])
    grade = grade_notebook(prepare(lab, time_limit=1.0), write(looping, tmp_path / "li.ipynb"))
    cases = next(e for e in grade.exercises if e.exercise == "scaled_sum").cases
    assert {c.status for c in cases} == {"timeout"}
    public = [c.message for c in cases if not c.hidden]
    assert all(m.startswith("本练习的公开测试用例在 1 秒的") and m.endswith("限制内没有得到结果")
               for m in public), public
    assert {c.message for c in cases if c.hidden} == {"超时"}
