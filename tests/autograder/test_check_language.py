"""``check`` speaks the notebook's language: the Chinese report's headline, statuses,
columns and hint labels; Chinese hint tiers where an exercise has them, the English
ones where it has none; the language picked up from ``lang=``, ``set_language``,
the running notebook's metadata and ``public_cases.json``; English unchanged."""

from __future__ import annotations

import dataclasses
import json
import re
import string
from pathlib import Path

import pytest

from autograder import set_language
from autograder.check import _installed_specs, report_html, run_check
from autograder.cli import main
from autograder.messages import CHINESE, ENGLISH, language_of
from autograder.release import public_cases
from autograder.spec import PUBLIC_CASES, load_lab

from ..labs.test_learner_help import LAB_IDS, _solution_source, code_like, solution_names
from .helpers import TOY, toy_lab

ROOT = Path(__file__).resolve().parents[2]
CHINESE_CHAR = re.compile(r"[\u4e00-\u9fff]")
GLOSSARY = json.loads((ROOT / "chapters" / "zh" / "glossary.json").read_text())["terms"]


@pytest.fixture(autouse=True)
def no_language_chosen(monkeypatch):
    """Each test starts with no language chosen and no notebook session."""
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    set_language(None)
    yield
    set_language(None)


def _wrong_counts(text):
    return {}


def _stub(text):
    raise NotImplementedError("word_counts: write your solution here")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_both_tables_have_the_same_keys_and_the_same_fields():
    assert CHINESE.keys() == ENGLISH.keys()
    for key in ENGLISH:
        assert _fields(CHINESE[key]) == _fields(ENGLISH[key]), key


@pytest.mark.parametrize("name, key", [("zh", "zh"), ("zh-CN", "zh"), ("zh_CN", "zh"),
                                       ("en", "en"), ("en-US", "en")])
def test_language_names_are_normalised(name, key):
    assert language_of(name) == key


def test_an_unknown_language_says_which_ones_exist():
    with pytest.raises(ValueError, match="'en', 'zh'"):
        run_check("word_counts", TOY, {"word_counts": _stub}, lang="fr")


def test_english_report_is_unchanged():
    report = run_check("word_counts", TOY, {"word_counts": _wrong_counts})
    assert report.headline() == ("word_counts: 1/2 public cases pass (some fail). These are "
                                 "the public cases only; grading also runs 1 hidden case(s).")
    text = report.to_text()
    assert "  [failed] two_words: " in text and "  [passed] empty" in text
    assert "      input:    'a b a'" in text and "      got:      {}" in text
    assert "<th>result</th><th>case</th><th>input</th>" in report_html([report])


def test_chinese_headline_statuses_columns_and_hint_labels():
    report = run_check("word_counts", TOY, {"word_counts": _wrong_counts}, lang="zh")
    assert report.headline() == ("word_counts：1/2 个公开测试用例通过（部分未通过）。这里只有公开的"
                                 "测试用例，评分时还会再跑 1 个隐藏测试用例。")
    text = report.to_text()
    assert "  [未通过] two_words: " in text and "  [通过] empty" in text
    assert "      输入： 'a b a'" in text and "      实际： {}" in text
    assert [label for label, _ in report.hints()] == ["提示 1/2"]
    assert "更多提示：check('word_counts', hint=2)" in text
    page = report_html([report])
    assert "<th>结果</th><th>测试用例</th><th>输入</th>" in page and ">未通过<" in page
    assert "更多提示：<code>" in page


def test_chinese_messages_for_a_stub_and_a_missing_function():
    stub = run_check("word_counts", TOY, {"word_counts": _stub}, lang="zh")
    assert stub.headline().startswith("word_counts：0/2 个公开测试用例通过（尚未作答）")
    assert {r.message for r in stub.results} == {"尚未作答"}
    missing = run_check("word_counts", TOY, {}, lang="zh")
    assert missing.results[0].message == ("还没有定义名为 'word_counts' 的函数；"
                                          "请先运行定义它的单元格")
    assert "[未定义]" in missing.to_text()


def test_an_exercise_without_chinese_hints_shows_the_english_ones():
    report = run_check("word_counts", TOY, {"word_counts": _wrong_counts}, lang="zh", hint=2)
    assert [text for _, text in report.hints()] == list(toy_lab().exercise("word_counts").hints)


def test_chinese_hints_are_shown_in_a_chinese_report_only():
    spec = load_lab("lab1_graph")
    exercise = spec.exercise("topological_sort")
    wrong = {"order_or_cycle": lambda g: {"order": []}}
    chinese = run_check("topological_sort", "lab1_graph", wrong, hint=3, lang="zh")
    english = run_check("topological_sort", "lab1_graph", wrong, hint=3)
    assert [text for _, text in chinese.hints()] == list(exercise.hints_zh)
    assert [text for _, text in english.hints()] == list(exercise.hints)


def test_set_language_applies_until_reset():
    set_language("zh")
    assert run_check("word_counts", TOY, {"word_counts": _stub}).language == "zh"
    assert run_check("word_counts", TOY, {"word_counts": _stub}, lang="en").language == "en"
    set_language(None)
    assert run_check("word_counts", TOY, {"word_counts": _stub}).language == "en"


@pytest.mark.parametrize("notebook, language", [
    ("chapters/zh/01_computational_graphs.ipynb", "zh"),
    ("labs/lab1_graph/source.zh.ipynb", "zh"),
    ("chapters/01_computational_graphs.ipynb", "en"),
    ("labs/lab1_graph/source.ipynb", "en"),
])
def test_the_running_notebooks_metadata_sets_the_language(monkeypatch, notebook, language):
    monkeypatch.setenv("JPY_SESSION_NAME", str(ROOT / notebook))
    assert run_check("ch1_node_depths", namespace={}).language == language


def test_the_session_variable_in_the_namespace_is_read_too():
    namespace = {"__session__": str(ROOT / "chapters/zh/01_computational_graphs.ipynb")}
    assert run_check("ch1_node_depths", namespace=namespace).language == "zh"


TOY_ZH = ("用空白分词，每个词计数一次。", "先 str.split()，再用字典计数。")


def _toy_with_chinese_hints():
    """The toy lab with Chinese tiers on word_counts (English ones stay on the others)."""
    lab = toy_lab()
    translated = dataclasses.replace(lab.exercise("word_counts"),
                                     hints_zh=TOY_ZH)
    return dataclasses.replace(lab, exercises=tuple(translated if ex.id == "word_counts" else ex
                                                    for ex in lab.exercises))


def test_the_chinese_public_cases_name_their_language_and_carry_chinese_hints():
    data = public_cases(_toy_with_chinese_hints(), "zh")
    by_id = {ex["id"]: ex for ex in data["exercises"]}
    assert data["language"] == "zh-CN"
    assert by_id["word_counts"]["hints"] == list(TOY_ZH)
    assert by_id["scaled_sum"]["hints"] == ["Broadcast: 2 * a + b, as float64."]


def test_english_public_cases_have_no_language_and_english_hints():
    data = public_cases(_toy_with_chinese_hints())
    assert "language" not in data
    assert {ex["id"]: ex["hints"] for ex in data["exercises"]}["word_counts"] == list(
        toy_lab().exercise("word_counts").hints)


def test_check_next_to_a_chinese_release_reports_in_chinese(tmp_path, monkeypatch):
    (tmp_path / PUBLIC_CASES).write_text(json.dumps(public_cases(_toy_with_chinese_hints(), "zh")))
    monkeypatch.chdir(tmp_path)
    report = run_check("word_counts", namespace={"word_counts": _wrong_counts})
    assert report.language == "zh"
    assert report.hints() == [("提示 1/2", TOY_ZH[0])]
    assert "个公开测试用例通过" in report.headline()


def test_hints_zh_must_have_as_many_tiers_as_hints():
    lab = toy_lab()
    short = dataclasses.replace(lab.exercise("word_counts"), hints_zh=("只有一层。",))
    broken = dataclasses.replace(lab, exercises=(short,))
    with pytest.raises(ValueError, match="hints_zh has 1 tier.* hints has 2"):
        broken.validate()


COURSE_SPECS = _installed_specs()
TERM_EXCEPTIONS = {
    ("one_f_one_b", "op"): "[op, micro_batch] names a pipeline action's field, not an operator",
}
"""(exercise id, English term) -> why its Chinese hints need not use the glossary's term."""


@pytest.mark.parametrize("spec", COURSE_SPECS, ids=[s.id for s in COURSE_SPECS])
def test_every_course_exercise_has_chinese_hints_in_glossary_terms(spec):
    spec.validate()
    for ex in spec.exercises:
        assert len(ex.hints_zh) == len(ex.hints), f"{ex.id} has no Chinese hints"
        for english, chinese in zip(ex.hints, ex.hints_zh, strict=True):
            assert CHINESE_CHAR.search(chinese), (ex.id, chinese)
            prose = english.lower().replace("-", " ")
            for term, zh in GLOSSARY.items():
                if re.search(rf"\b{term}s?\b", prose) and (ex.id, term) not in TERM_EXCEPTIONS:
                    assert zh in chinese, f"{ex.id}: {term!r} should read {zh!r} in {chinese!r}"


def test_the_released_chinese_lab_reports_in_chinese_with_no_extra_call(tmp_path, monkeypatch):
    assert main(["release", "lab1_graph", "--out", str(tmp_path), "--lang", "zh"]) == 0
    monkeypatch.chdir(tmp_path / "zh" / "lab1_graph")
    assert json.loads(Path(PUBLIC_CASES).read_text())["language"] == "zh-CN"
    report = run_check("fold_constants", namespace={"fold_constants": lambda g: g})
    tiers = load_lab("lab1_graph").exercise("fold_constants").hints_zh
    assert report.language == "zh" and report.hints() == [("提示 1/3", tiers[0])]


LAB_EXERCISES = [pytest.param(spec.id, ex, id=f"{spec.id}-{ex.id}")
                 for spec in COURSE_SPECS if spec.id in LAB_IDS for ex in spec.exercises]


@pytest.mark.parametrize(("lab_id", "ex"), LAB_EXERCISES)
def test_chinese_tier_one_is_a_nudge_without_code_too(lab_id, ex):
    first, last = ex.hints_zh[0], ex.hints_zh[-1]
    assert len(first) < len(last), "tier 1 is a nudge, the last tier the fullest"
    assert code_like(first, solution_names(_solution_source(lab_id, ex.id))) == []


def test_a_misspelled_id_is_reported_in_the_reports_language():
    with pytest.raises(LookupError, match="请检查练习 id 的拼写"):
        run_check("ch1_node_dpths", namespace={}, lang="zh")
    with pytest.raises(LookupError, match="check the spelling of the id"):
        run_check("ch1_node_dpths", namespace={})


def test_figures_and_self_checks_share_one_language_choice(monkeypatch):
    import vizkit
    from autograder.check import report_language

    assert set_language is vizkit.set_language
    monkeypatch.setenv("COURSE_LANG", "zh")    # what `make lab LANG=zh` exports
    assert report_language(namespace={}) == "zh"
    set_language("en")
    try:
        assert report_language(namespace={}) == "en"
    finally:
        set_language(None)
