"""The words ``check`` and ``check_all`` show, one table per language.

Each table maps a key to a template filled in with :meth:`str.format`; both
tables have the same keys (a test makes sure). The Chinese table uses the
terms of ``chapters/zh/glossary.json`` (测试用例, 练习, 提示...), so the report
reads like the Chinese notebook around it.

``language_of`` turns what a learner or a notebook writes (``"zh"``, ``"zh-CN"``,
``"zh_CN"``, ``"en"``, ``"en-US"``) into a key of :data:`MESSAGES`.
"""

from __future__ import annotations

ENGLISH = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "not_attempted": "not attempted",
    "missing": "not defined",
    "word_passed": "all pass",
    "word_not_attempted": "not attempted yet",
    "word_failed": "some fail",
    "headline": "{id}: {passed}/{total} cases pass ({word}).",
    "headline_hidden": ("{id}: {passed}/{total} public cases pass ({word}). These are the "
                        "public cases only; grading also runs {hidden} hidden case(s)."),
    "hint": "Hint",
    "hint_of": "Hint {k} of {n}",
    "more_help_text": "more help",
    "more_help_html": "More help",
    "colon": ": ",
    "not_attempted_message": "not attempted yet",
    "missing_message": "no function named {function!r} is defined; run its cell first",
    "raised": "raised {kind}: {error}{where}",
    "raised_where": " (line {line} in {name})",
    "not_receivable": "the grader could not receive this value: {error}",
    "input": "input:   ",
    "expected": "expected:",
    "got": "got:     ",
    "col_result": "result",
    "col_case": "case",
    "col_input": "input",
    "col_expected": "expected",
    "col_got": "got",
    "col_message": "message",
    "summary": ("{done}/{total} exercises pass all their public cases "
                "(public cases only; grading adds hidden cases)."),
    "in_several_labs": "exercise {id!r} exists in labs {labs}; pass lab=...",
    "no_such_exercise": ("no lab has an exercise {id!r} (looked at ./spec.py, ./{public}, "
                         "labs/*/spec.py and chapters/practice/*/spec.py); check the spelling "
                         "of the id"),
    "which_lab": "cannot tell which lab this is; call check_all(lab='lab1_graph')",
}

CHINESE = {
    "passed": "通过",
    "failed": "未通过",
    "error": "出错",
    "not_attempted": "未作答",
    "missing": "未定义",
    "word_passed": "全部通过",
    "word_not_attempted": "尚未作答",
    "word_failed": "部分未通过",
    "headline": "{id}：{passed}/{total} 个测试用例通过（{word}）。",
    "headline_hidden": ("{id}：{passed}/{total} 个公开测试用例通过（{word}）。这里只有公开的"
                        "测试用例，评分时还会再跑 {hidden} 个隐藏测试用例。"),
    "hint": "提示",
    "hint_of": "提示 {k}/{n}",
    "more_help_text": "更多提示",
    "more_help_html": "更多提示",
    "colon": "：",
    "not_attempted_message": "尚未作答",
    "missing_message": "还没有定义名为 {function!r} 的函数；请先运行定义它的单元格",
    "raised": "抛出了 {kind}：{error}{where}",
    "raised_where": "（第 {line} 行，在 {name} 中）",
    "not_receivable": "评分器无法接收这个返回值：{error}",
    "input": "输入：",
    "expected": "期望：",
    "got": "实际：",
    "col_result": "结果",
    "col_case": "测试用例",
    "col_input": "输入",
    "col_expected": "期望值",
    "col_got": "实际值",
    "col_message": "说明",
    "summary": ("{done}/{total} 个练习的公开测试用例全部通过"
                "（只含公开测试用例；评分时还会加上隐藏测试用例）。"),
    "in_several_labs": "练习 {id!r} 同时出现在实验 {labs} 中；请用 lab=... 指明是哪一个",
    "no_such_exercise": ("没有哪个实验有练习 {id!r}（已查找 ./spec.py、./{public}、"
                         "labs/*/spec.py 和 chapters/practice/*/spec.py）；请检查练习 id 的拼写"),
    "which_lab": "无法判断这是哪个实验；请调用 check_all(lab='lab1_graph')",
}

MESSAGES = {"en": ENGLISH, "zh": CHINESE}
"""language -> key -> template."""


def language_of(name: str) -> str:
    """The key of :data:`MESSAGES` for a language name: ``"zh-CN"`` -> ``"zh"``."""
    key = str(name).replace("_", "-").split("-")[0].lower()
    if key not in MESSAGES:
        raise ValueError(f"check() has no messages in {name!r}: use one of "
                         f"{', '.join(repr(k) for k in MESSAGES)}")
    return key


def message(language: str, key: str, **fields) -> str:
    """The template ``key`` in ``language``, filled in with ``fields``."""
    return MESSAGES[language][key].format(**fields)
