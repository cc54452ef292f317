"""The words of the similarity page (:mod:`autograder.similarity`), one table per language.

Kept apart from :mod:`autograder.messages` (the learner-facing tables) because only the
instructor reads them; the same rules hold: both tables have the same keys (a test
makes sure) and the Chinese one uses the terms of ``chapters/zh/glossary.json``.
"""

from __future__ import annotations

from .messages import language_of

ENGLISH = {
    "sim_title": "Similar submissions: {title}",
    "sim_caution": ("This page is evidence for a person to judge, never a verdict. A high "
                    "score says two submissions share long stretches of code once names, "
                    "comments and the released starter code are set aside; short exercises, "
                    "a shared textbook idiom or help the course allows can do that too. Read "
                    "both sides before drawing any conclusion, and talk to the students."),
    "sim_method": ("Compared with copydetect (winnowing): identifiers, strings and comments "
                   "are ignored, so renamed variables and reordered functions still match; "
                   "matches shorter than {k} tokens are ignored. Each side's share is the part "
                   "of its own code found in the other; the score is the mean of the two. "
                   "Nothing was run."),
    "sim_meta": ("Lab {lab}: {count} submissions compared, {pairs} pairs share some code; "
                 "took {seconds} s; generated {when}."),
    "sim_skipped": "Not compared:",
    "sim_h_ranking": "Pairs, most similar first",
    "sim_no_pairs": "No two submissions share a region of code.",
    "sim_col_rank": "rank",
    "sim_col_a": "submission A",
    "sim_col_b": "submission B",
    "sim_col_score": "score",
    "sim_col_of_a": "share of A",
    "sim_col_of_b": "share of B",
    "sim_col_tokens": "shared tokens",
    "sim_pair": "{rank}. {a} and {b}: {pct}",
    "sim_side": "{student} ({pct} of it matches, marked)",
}

CHINESE = {
    "sim_title": "相似的提交：{title}",
    "sim_caution": ("本页只是供人判断的证据，绝不是结论。分数高只说明：撇开名字、注释和发布的初始"
                    "代码之后，两份提交有大段相同的代码；练习很短、大家都用同一种常见写法，或课程"
                    "允许的互助，也都可能造成这种情况。下结论之前请先读完两边的代码，并和学生谈一谈。"),
    "sim_method": ("用 copydetect（winnowing 算法）比较：忽略标识符、字符串和注释，所以改了变量名"
                   "或调换了函数顺序仍然能匹配；短于 {k} 个词元的匹配忽略不计。每一边的占比是它自己"
                   "的代码中在另一边也出现的部分；分数是两边占比的平均值。没有运行任何代码。"),
    "sim_meta": ("实验 {lab}：比较了 {count} 份提交，其中 {pairs} 对有相同的代码；用时 {seconds} "
                 "秒；生成于 {when}。"),
    "sim_skipped": "没有参与比较：",
    "sim_h_ranking": "提交对，按相似程度从高到低",
    "sim_no_pairs": "没有任何两份提交有相同的代码段。",
    "sim_col_rank": "名次",
    "sim_col_a": "提交 A",
    "sim_col_b": "提交 B",
    "sim_col_score": "分数",
    "sim_col_of_a": "A 的占比",
    "sim_col_of_b": "B 的占比",
    "sim_col_tokens": "相同的词元数",
    "sim_pair": "{rank}. {a} 与 {b}：{pct}",
    "sim_side": "{student}（{pct} 相同，已标出）",
}

WORDS = {"en": ENGLISH, "zh": CHINESE}


def say(language: str, key: str, **fields) -> str:
    """The template ``key`` in ``language`` (``"zh"``, ``"zh-CN"``, ``"en"``), filled in."""
    return WORDS[language_of(language)][key].format(**fields)
