"""The course report's words, one table per language (the same keys in both; a test
checks). The Chinese uses the terms of ``chapters/zh/glossary.json`` (练习, 学生...)."""

from __future__ import annotations

ENGLISH = {
    "title": "Course report: {title}",
    "meta": ("{labs} labs, {students} students on the roster; counted attempt: {counts}; "
             "as of {when}; term gradebook {gradebook}"),
    "counts_best": "the best after penalty",
    "counts_latest": "the latest",
    "h_trend": "Scores across the term",
    "fig_trend": "Final score per lab (after penalties)",
    "mean": "mean",
    "median": "median",
    "late_share": "submitted late",
    "missing_share": "not submitted",
    "axis_percent": "% of the lab's points / of the students",
    "trend_text": ("Over the {labs} labs due so far the mean final score went from {first} "
                   "({first_lab}) to {last} ({last_lab}); the lowest mean was {low} "
                   "({low_lab}). Of {expected} expected submissions, {late} came late and "
                   "{missing} never came."),
    "trend_none": "No lab is due yet, so there is no trend to show.",
    "h_behind": "Who is falling behind",
    "behind_rule": ("Rule: a student is falling behind when, counting only the labs due so "
                    "far, they scored under {pct}% of a lab's points (after penalties; a lab "
                    "not submitted counts as 0) on at least {count} labs, or on the most "
                    "recent one."),
    "fig_behind": "Each student's final score per lab (% of its points)",
    "behind_text": ("{count} of {students} students are falling behind by the rule above: "
                    "{who}. Blank cells are labs not submitted."),
    "nobody": "nobody",
    "list": ", ",
    "col_student": "student",
    "col_name": "name",
    "col_why": "why",
    "why_recent": "under {pct}% on the most recent lab ({lab})",
    "why_count": "under {pct}% on {count} labs ({labs})",
    "why_join": "; ",
    "h_difficulty": "Exercise difficulty",
    "fig_difficulty": "Mean score per exercise (counted attempts, % of its points)",
    "difficulty_text": ("Hardest exercises by mean score: {hardest}. Easiest: {easiest}. "
                        "Each mean is over the students whose counted attempt has the "
                        "exercise."),
    "exercise_item": "{lab} / {exercise} ({pct}%, {passed} of {students} passed every case)",
    "col_lab": "lab",
    "col_exercise": "exercise",
    "col_mean": "mean score",
    "col_passed": "passed every case",
    "col_students": "students",
    "h_labs": "Labs",
    "col_due": "due",
    "col_points": "points",
    "col_submitted": "submitted",
    "col_late": "late",
    "col_missing": "not submitted",
    "col_mean_pct": "mean final",
    # the course's lines at the top of a student's feedback (autograder.course.lms)
    "fb_attempt": ("Attempt {attempt}, submitted {at} (due {due}; the time comes from the "
                   "{source})."),
    "fb_source_manifest": "LMS's submission times",
    "fb_source_mtime": "file's time on the instructor's disk",
    "fb_late": "Late by {days} day(s): {pct}% is taken off.",
    "fb_points": "Score {score} of {max}; points for this lab: {final} of {points}.",
    "fb_override": "Instructor override on {exercise}: {points} point(s). Reason: {reason}",
    "fb_override_note": ("Instructor override: {points} point(s) (the grader gave {graded}). "
                         "Reason: {reason}"),
}

CHINESE = {
    "title": "课程报告：{title}",
    "meta": ("{labs} 个实验，名单上 {students} 名学生；计分的提交：{counts}；截至 {when}；"
             "学期成绩册 {gradebook}"),
    "counts_best": "扣分后最好的一次",
    "counts_latest": "最后一次",
    "h_trend": "整个学期的成绩",
    "fig_trend": "每个实验的最终得分（扣除迟交分之后）",
    "mean": "平均",
    "median": "中位数",
    "late_share": "迟交",
    "missing_share": "未提交",
    "axis_percent": "占实验总分 / 占学生的百分比",
    "trend_text": ("在已到截止日期的 {labs} 个实验中，平均最终得分从 {first}（{first_lab}）变为 "
                   "{last}（{last_lab}）；最低的平均分是 {low}（{low_lab}）。应交的 {expected} "
                   "份提交中，{late} 份迟交，{missing} 份没有提交。"),
    "trend_none": "还没有实验到截止日期，因此没有趋势可以显示。",
    "h_behind": "谁落后了",
    "behind_rule": ("规则：只看已到截止日期的实验，若学生在至少 {count} 个实验上、或在最近一个实"
                    "验上得分低于该实验总分的 {pct}%（扣除迟交分之后；未提交的实验按 0 分计），"
                    "就算落后。"),
    "fig_behind": "每名学生在每个实验上的最终得分（占总分的百分比）",
    "behind_text": "按上面的规则，{students} 名学生中有 {count} 名落后：{who}。空白格表示未提交。",
    "nobody": "无",
    "list": "、",
    "col_student": "学生",
    "col_name": "姓名",
    "col_why": "原因",
    "why_recent": "最近一个实验（{lab}）低于 {pct}%",
    "why_count": "{count} 个实验低于 {pct}%（{labs}）",
    "why_join": "；",
    "h_difficulty": "练习的难度",
    "fig_difficulty": "每个练习的平均得分（计分的提交，占该练习总分的百分比）",
    "difficulty_text": ("平均得分最低的练习：{hardest}。最高的：{easiest}。每个平均分只统计计分的"
                        "提交中含有该练习的学生。"),
    "exercise_item": ("{lab} / {exercise}（{pct}%，{students} 名学生中 {passed} 名通过全部测试"
                      "用例）"),
    "col_lab": "实验",
    "col_exercise": "练习",
    "col_mean": "平均得分",
    "col_passed": "全部通过",
    "col_students": "学生人数",
    "h_labs": "实验",
    "col_due": "截止日期",
    "col_points": "总分",
    "col_submitted": "已提交",
    "col_late": "迟交",
    "col_missing": "未提交",
    "col_mean_pct": "平均最终得分",
    "fb_attempt": "提交 {attempt}，提交时间 {at}（截止 {due}；时间来自{source}）。",
    "fb_source_manifest": "学习管理系统记录的提交时间",
    "fb_source_mtime": "教师电脑上文件的修改时间",
    "fb_late": "迟交 {days} 天：扣除 {pct}%。",
    "fb_points": "得分 {score} / {max}；本实验计 {final} / {points} 分。",
    "fb_override": "教师修改了 {exercise} 的得分：{points} 分。原因：{reason}",
    "fb_override_note": "教师修改了得分：{points} 分（评分程序给出 {graded} 分）。原因：{reason}",
}

WORDS = {"en": ENGLISH, "zh": CHINESE}
LANGUAGES = tuple(WORDS)


def say(language: str, key: str, **fields) -> str:
    """The template ``key`` in ``language``, filled in with ``fields``."""
    return WORDS[language][key].format(**fields)
