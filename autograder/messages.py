"""The words the autograder shows a learner, one table per language.

The tables hold what ``check`` and ``check_all`` show, the texts that say where
two values differ (:mod:`autograder.summarize`, :mod:`autograder.compare`), the
exported feedback, the Gradescope results and the class report.

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
    "stub": "{id}: write your solution here",
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
    # where two values differ (autograder.summarize.mismatch, autograder.compare)
    "diff_at": "at {path}: ",
    "diff_join": "; ",
    "diff_too_deep": "values nested too deeply to compare here",
    "diff_items": "expected {expected} items, got {got}",
    "diff_values": "expected {expected}, got {got}",
    "diff_described": "a {kind} ({value})",
    "diff_missing_keys": "missing keys {keys}",
    "diff_unexpected_keys": "unexpected keys {keys}",
    "diff_shape": "shape differs: expected {expected}, got {got}{dtypes}",
    "diff_shape_dtypes": " (dtype {expected} vs {got})",
    "diff_dtype": "dtype differs: expected {expected}, got {got}",
    "diff_tolerance": " (rtol={rtol:g}, atol={atol:g})",
    "diff_elements": "{count} of {size} elements differ; {shown}{more}{tolerance}",
    "diff_element_at": "at {index}: expected {expected}, got {got}",
    "diff_more": "; ...",
    "cmp_kinds": "expected a {expected_kind} ({expected}), got a {got_kind} ({got})",
    "cmp_not_numeric": ("expected an array of shape {shape}, got a sequence that is not a "
                        "numeric array ({got})"),
    "cmp_not_array": "expected an array of shape {shape}, got a {kind} ({got})",
    "cmp_shape": "expected shape {expected}, got shape {got}",
    "cmp_booleans": "expected booleans, got dtype {dtype}",
    "cmp_elements": ("{count} of {size} elements differ; first at index {index}: "
                     "expected {expected}, got {got}"),
    "cmp_largest": "; largest abs difference {worst:.3g}",
    "cmp_collection": "expected a collection, got a {kind} ({got})",
    "cmp_missing": "missing {items}",
    "cmp_unexpected": "unexpected {items}",
    "cmp_any_order": " (order does not matter)",
    "cmp_custom_failed": "custom comparison failed",
    # what the sandbox says about a case it got no value for (autograder.sandbox)
    "sb_too_large_parts": ("the returned value is too large to grade ({size} bytes, {items} parts "
                           "once encoded; the limits are {line_bytes} bytes and {line_items} "
                           "parts for one case): return just what the exercise asks for"),
    "sb_too_large": ("the returned value is too large to grade ({size} bytes once encoded): "
                     "return just what the exercise asks for"),
    "sb_malformed": "the returned value is malformed: {error}",
    "sb_unknown_result": "the sandbox sent an unknown result",
    "sb_exit_none": "did not exit",
    "sb_exit_signal": "was killed by signal {name}",
    "sb_exit_status": "exited with status {code}",
    "sb_how_exit": "ended the process",
    "sb_how_closed": "closed the grader's channel",
    "sb_how_cell_timeout": "did not finish in time",
    "sb_how_timeout": "did not finish in time",
    "sb_how_overflow": "sent back too much",
    "sb_how_cpu": "used up its CPU time",
    "sb_how_failed": "failed",
    "sb_skipped": ("cell {index} {how} when it ran before this exercise's {kind} cases, so it "
                   "was skipped for them (it still counts against its own exercise)"),
    "sb_lost": ("the process {exit} while running this case; the remaining cases ran in a "
                "fresh process"),
    "sb_timeout": ("no result within the {limit} limit of {seconds} s for this exercise's "
                   "{kind} cases"),
    "sb_limit_cpu": "CPU-time",
    "sb_limit_wall": "wall-clock",
    "sb_closed": ("the exercise's code closed its channel to the grader (the result pipe) "
                  "before returning a result for this case"),
    "sb_overflow": ("the results were too large: your code sent back more than {mib} MiB for "
                    "this exercise's {kind} cases; return just what the exercise asks for"),
    "sb_died": "the exercise's process {exit} before returning a result for this case",
    # grading (autograder.grade): what a case or an exercise says in the gradebook
    "grade_missing_cell": ("no cell tagged as exercise {id!r} was found: it may have been "
                           "deleted; copy it back from the released notebook"),
    "grade_forbidden_by_name": ("imports {banned}, which this exercise forbids (forbidden: "
                                "{forbidden}); the exercise scores 0"),
    "grade_grader_failed": ("the grader failed while grading this exercise ({kind}); it "
                            "scores 0 for now: tell your instructor, who can re-grade it"),
    "grade_several_cells": ("exercise {id!r} appears in {count} cells; all run in notebook "
                            "order, so the last definition counts"),
    "grade_forbidden_run": ("imported {banned} while running, which this exercise forbids; "
                            "the exercise scores 0"),
    "grade_cell_raised": "your exercise cell raised when run: {error}",
    "lint_loop": ("line {line}: a `while` loop at the top of the cell runs whenever the cell "
                  "runs; if it does not end, grading stops the cell, and this exercise and "
                  "every exercise that calls it score 0: move it into a function or delete it"),
    "lint_exit": ("line {line}: {call}() at the top of the cell ends the process; when grading, "
                  "the cell then does not finish, and this exercise and every exercise that "
                  "calls it score 0: delete it"),
    "grade_own_cell_failed": ("your exercise cell stopped with an error before the tests ran, "
                              "and an exercise whose cell does not run cleanly scores 0: fix "
                              "or remove the failing top-level line ({error})"),
    "grade_calls_broken": ("the cell of exercise {other!r} (cell {index}) did not finish "
                           "({why}), and this exercise calls its {names}: fix that cell first"),
    "grade_unreadable_result": "the grader could not read this result ({kind})",
    "grade_could_not_compare": "could not compare: {kind}: {error}",
    "grade_wrong": "wrong result",
    "grade_wrong_because": "wrong result: {difference}",
    "grade_not_attempted": "not attempted (the function still raises NotImplementedError)",
    "grade_failed_before": "your exercise cell failed before defining {function!r}:\n{error}",
    "grade_unknown_exercise": "cell {index} is tagged with unknown exercise {id!r}; ignored",
    "grade_own_class": "an exception class of its own",
    "hidden_raised": "raised {kind}",
    "hidden_failed": "wrong result",
    "hidden_error": "an error (details are not shown for a hidden case)",
    "hidden_not_attempted": "not attempted",
    "hidden_timeout": "timed out",
    "hidden_crashed": "the process died",
    "hidden_too_large": "the returned value was too large",
    "hidden_forbidden_import": "imports a module this exercise forbids",
    "hidden_missing": "the function is missing",
    # a case's or an exercise's status in feedback, Gradescope and the class report
    "label_passed": "passed",
    "label_failed": "failed",
    "label_error": "error",
    "label_not_attempted": "not attempted",
    "label_timeout": "timed out",
    "label_crashed": "crashed",
    "label_forbidden_import": "forbidden import",
    "label_missing": "missing",
    "label_invalid_submission": "invalid submission",
    "label_partial": "partly passed",
    "label_too_large": "too_large",
    "label_grader_error": "grader_error",
    # exported feedback (autograder.export)
    "fb_title": "{title}: feedback for {student}",
    "fb_total": "Total: {score} / {max}",
    "fb_status": "Submission status: {label}.",
    "fb_exercise": "{id}: {score} / {max} ({label})",
    "fb_all_passed": "All {cases} cases passed ({public} public, {hidden} hidden).",
    "fb_all_cases": "All {cases} cases: {label}.",
    "fb_public": "Public cases: {passed} of {total} passed.",
    "fb_first_failure": "First failing public case: {name} ({label})",
    "fb_also_failing": "Also failing: {names}.",
    "fb_hidden_head": "Hidden cases (name and result only):",
    "fb_printed": ("Your code printed, while the public cases ran (first part; nothing printed "
                   "during hidden cases is kept):"),
    "fb_more_lines": "... ({count} more lines)",
    "fb_input": "input",
    "fb_expected": "expected",
    "fb_got": "got",
    "fb_message": "message",
    "fb_item": "{label}: {value}",
    # Gradescope results (autograder.gradescope)
    "gs_hidden_test": " (hidden)",
    "gs_hidden_output": "hidden case: {label}",
    "gs_public_line": "{id}: {passed} of {total} public cases passed",
    "gs_hidden_count": "; {hidden} hidden case(s): {when}",
    "gs_when_hidden": "their results are not shown",
    "gs_when_after_due_date": "their results are shown after the due date",
    "gs_when_after_published": "their results are shown when grades are published",
    "gs_failure": ("The autograder could not grade this submission. This is not a judgement "
                   "of your work; tell your instructor."),
    "gs_no_notebook": "No .ipynb file was found in your submission; upload your lab notebook.",
    "gs_several": "{count} notebooks were submitted; graded {name}.",
    # the class report (autograder.report)
    "rp_title": "Class report: {title}",
    "rp_meta": "Lab {lab}, {count} graded submissions, from {gradebook}; generated {when}.",
    "rp_h_scores": "Score distribution",
    "rp_h_pass": "Pass rates",
    "rp_h_messages": "Most common failure messages",
    "rp_h_exceptions": "Most common exceptions",
    "rp_h_hidden": "Passed every public case, failed a hidden one",
    "rp_h_slowest": "Slowest submissions",
    "rp_h_not_attempted": "Did not attempt",
    "rp_fig_scores": "Total scores",
    "rp_hover_scores": "{x} points: {y} students",
    "rp_axis_total": "total score (of {max})",
    "rp_axis_students": "students",
    "rp_scores_text": ("{count} submissions. Mean {mean} of {max} ({pct}), median {median}, "
                       "lowest {low}, highest {high}. {full} scored full marks and {zero} "
                       "scored 0. The most common range is {lo}–{hi} points ({n} students)."),
    "rp_bin": "{lo}–{hi}",
    "rp_fig_exercises": "Exercises",
    "rp_passed_every": "passed every case",
    "rp_mean_score": "mean score",
    "rp_axis_percent": "% of students / of points",
    "rp_hardest": ("Hardest exercise: {id}, where {passed} of {students} students ({pct}) "
                   "passed every case; mean score {mean}."),
    "rp_easiest": " Easiest: {id}, {passed} of {students} ({pct}); mean score {mean}.",
    "rp_fig_cases": "Cases",
    "rp_public_case": "public case",
    "rp_hidden_case": "hidden case",
    "rp_axis_passing": "% of students passing",
    "rp_cases_text": ("{everyone} of {total} cases were passed by every student. Lowest pass "
                      "rate, {pct}: {worst}"),
    "rp_and_more": " and {more} more.",
    "rp_end": ".",
    "rp_hidden_mark": " (hidden)",
    "rp_kind_mean": " Mean pass rate of {kind} cases: {pct}.",
    "kind_public": "public",
    "kind_hidden": "hidden",
    "rp_none_of": "No {what}.",
    "rp_tally_text": ("{count} distinct {what}; the {top} most common. Numbers are ignored "
                      "when grouping; the first variant seen is shown."),
    "rp_failure_messages": "failure messages",
    "rp_exception_classes": "exception classes",
    "rp_hidden_text": ("{total} times a student passed every public case of an exercise but "
                       "failed one of its hidden cases."),
    "rp_slowest_text": ("Running time of each submission (the sum of its exercises' seconds), "
                        "the {shown} slowest of {total}."),
    "rp_not_attempted_text": ("{count} of {total} students attempted nothing (every exercise "
                              "not attempted or missing, or an unreadable notebook): {who}."),
    "rp_nobody": "none",
    "rp_list": ", ",
    "col_exercise": "exercise",
    "col_students": "students",
    "col_cases": "cases",
    "col_exercises": "exercises",
    "col_variants": "variants",
    "col_exception": "exception",
    "col_who": "who",
    "col_student": "student",
    "col_seconds": "seconds",
    "col_not_attempted": "not attempted",
    "col_of_students": "of students",
    "col_passed_every": "passed every case",
    "col_pass_rate": "pass rate",
    "col_mean_score": "mean score",
    "col_points": "points",
    "col_kind": "kind",
    "col_passed": "passed",
}

CHINESE = {
    "passed": "通过",
    "failed": "未通过",
    "error": "出错",
    "not_attempted": "未作答",
    "stub": "{id}：在这里写下你的解答",
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
    "diff_at": "在 {path} 处：",
    "diff_join": "；",
    "diff_too_deep": "嵌套太深，这里无法比较",
    "diff_items": "期望 {expected} 项，实际 {got} 项",
    "diff_values": "期望 {expected}，实际 {got}",
    "diff_described": "{kind}（{value}）",
    "diff_missing_keys": "缺少键 {keys}",
    "diff_unexpected_keys": "多出键 {keys}",
    "diff_shape": "形状不同：期望 {expected}，实际 {got}{dtypes}",
    "diff_shape_dtypes": "（dtype {expected} 与 {got}）",
    "diff_dtype": "dtype 不同：期望 {expected}，实际 {got}",
    "diff_tolerance": "（rtol={rtol:g}，atol={atol:g}）",
    "diff_elements": "{size} 个元素中有 {count} 个不同；{shown}{more}{tolerance}",
    "diff_element_at": "在 {index} 处：期望 {expected}，实际 {got}",
    "diff_more": "；……",
    "cmp_kinds": "期望{expected_kind}（{expected}），实际是{got_kind}（{got}）",
    "cmp_not_numeric": "期望形状为 {shape} 的数组，实际是一个不能转成数值数组的序列（{got}）",
    "cmp_not_array": "期望形状为 {shape} 的数组，实际是{kind}（{got}）",
    "cmp_shape": "期望形状 {expected}，实际形状 {got}",
    "cmp_booleans": "期望布尔值，实际 dtype 为 {dtype}",
    "cmp_elements": ("{size} 个元素中有 {count} 个不同；第一个在下标 {index}："
                     "期望 {expected}，实际 {got}"),
    "cmp_largest": "；最大绝对误差 {worst:.3g}",
    "cmp_collection": "期望一个容器（列表、元组、集合或数组），实际是{kind}（{got}）",
    "cmp_missing": "缺少 {items}",
    "cmp_unexpected": "多出 {items}",
    "cmp_any_order": "（顺序无关）",
    "cmp_custom_failed": "自定义比较未通过",
    "sb_too_large_parts": ("返回值太大，无法评分（编码后 {size} 字节、{items} 个部分；一个测试用"
                           "例的上限是 {line_bytes} 字节、{line_items} 个部分）：只返回练习要求"
                           "的内容"),
    "sb_too_large": "返回值太大，无法评分（编码后 {size} 字节）：只返回练习要求的内容",
    "sb_malformed": "返回值格式有误：{error}",
    "sb_unknown_result": "沙箱发回了无法识别的结果",
    "sb_exit_none": "没有退出",
    "sb_exit_signal": "被信号 {name} 终止了",
    "sb_exit_status": "以状态码 {code} 退出了",
    "sb_how_exit": "结束了进程",
    "sb_how_closed": "关闭了与评分器的通道",
    "sb_how_cell_timeout": "没有按时运行完",
    "sb_how_timeout": "没有按时运行完",
    "sb_how_overflow": "发回的数据太多",
    "sb_how_cpu": "用完了 CPU 时间",
    "sb_how_failed": "出错了",
    "sb_skipped": ("第 {index} 个单元格在本练习的{kind}测试用例之前运行时{how}，所以运行这些测试"
                   "用例时跳过了它（它仍然计入它自己的练习）"),
    "sb_lost": "进程在运行这个测试用例时{exit}；其余测试用例在一个新进程中运行",
    "sb_timeout": "本练习的{kind}测试用例在 {seconds} 秒的{limit}限制内没有得到结果",
    "sb_limit_cpu": "CPU 时间",
    "sb_limit_wall": "墙钟时间",
    "sb_closed": "练习的代码在返回这个测试用例的结果之前关闭了与评分器的通道（结果管道）",
    "sb_overflow": ("结果太大：你的代码为本练习的{kind}测试用例发回了超过 {mib} MiB 的数据；只返"
                    "回练习要求的内容"),
    "sb_died": "练习的进程在返回这个测试用例的结果之前{exit}",
    "grade_missing_cell": ("没有找到标记为练习 {id!r} 的单元格：它可能被删掉了；请从发布的 "
                           "notebook 里把它复制回来"),
    "grade_forbidden_by_name": ("导入了 {banned}，这个练习禁止导入它（禁止：{forbidden}）；本练"
                                "习记 0 分"),
    "grade_grader_failed": ("评分器给这个练习评分时出错（{kind}）；暂记 0 分：请告诉老师，老师可"
                            "以重新评分"),
    "grade_several_cells": ("练习 {id!r} 出现在 {count} 个单元格中；它们按 notebook 中的顺序全部"
                            "运行，以最后一个定义为准"),
    "grade_forbidden_run": "运行时导入了 {banned}，这个练习禁止导入它；本练习记 0 分",
    "grade_cell_raised": "你的练习单元格运行时抛出了异常：{error}",
    "lint_loop": ("第 {line} 行：单元格顶层的 `while` 循环在每次运行单元格时都会执行；"
                  "它若不结束，评分时这个单元格会被中止，本练习和所有调用它的练习都记 0 分："
                  "请把它移进函数里或删掉"),
    "lint_exit": ("第 {line} 行：单元格顶层的 {call}() 会结束进程；评分时这个单元格因此运行不完，"
                  "本练习和所有调用它的练习都记 0 分：请删掉它"),
    "grade_own_cell_failed": ("你的练习单元格在测试运行之前就因出错而停下了；"
                              "单元格不能顺利运行完的练习记 0 分：请修正或删去出错的顶层代码"
                              "（{error}）"),
    "grade_calls_broken": ("练习 {other!r} 的单元格（第 {index} 个单元格）没有运行完（{why}），"
                           "而本练习调用了它的 {names}：请先修好那个单元格"),
    "grade_unreadable_result": "评分器无法读取这个结果（{kind}）",
    "grade_could_not_compare": "无法比较：{kind}：{error}",
    "grade_wrong": "结果错误",
    "grade_wrong_because": "结果错误：{difference}",
    "grade_not_attempted": "尚未作答（函数仍然抛出 NotImplementedError）",
    "grade_failed_before": "你的练习单元格在定义 {function!r} 之前就出错了：\n{error}",
    "grade_unknown_exercise": "第 {index} 个单元格标记的练习 {id!r} 不存在；已忽略",
    "grade_own_class": "自定义的异常类",
    "hidden_raised": "抛出了 {kind}",
    "hidden_failed": "结果错误",
    "hidden_error": "出错（隐藏测试用例不显示细节）",
    "hidden_not_attempted": "尚未作答",
    "hidden_timeout": "超时",
    "hidden_crashed": "进程崩溃了",
    "hidden_too_large": "返回值太大",
    "hidden_forbidden_import": "导入了这个练习禁止的模块",
    "hidden_missing": "函数不存在",
    "label_passed": "通过",
    "label_failed": "未通过",
    "label_error": "出错",
    "label_not_attempted": "未作答",
    "label_timeout": "超时",
    "label_crashed": "崩溃",
    "label_forbidden_import": "禁止的导入",
    "label_missing": "缺失",
    "label_invalid_submission": "无效提交",
    "label_partial": "部分通过",
    "label_too_large": "返回值太大",
    "label_grader_error": "评分器出错",
    "fb_title": "{title}：{student} 的反馈",
    "fb_total": "总分：{score} / {max}",
    "fb_status": "提交状态：{label}。",
    "fb_exercise": "{id}：{score} / {max}（{label}）",
    "fb_all_passed": "全部 {cases} 个测试用例通过（公开 {public} 个，隐藏 {hidden} 个）。",
    "fb_all_cases": "全部 {cases} 个测试用例：{label}。",
    "fb_public": "公开测试用例：{total} 个中通过 {passed} 个。",
    "fb_first_failure": "第一个未通过的公开测试用例：{name}（{label}）",
    "fb_also_failing": "同样未通过：{names}。",
    "fb_hidden_head": "隐藏测试用例（只显示名称和结果）：",
    "fb_printed": ("公开测试用例运行时你的代码打印的内容（只保留开头部分；隐藏测试用例运行时打印"
                   "的内容一概不保留）："),
    "fb_more_lines": "……（还有 {count} 行）",
    "fb_input": "输入",
    "fb_expected": "期望",
    "fb_got": "实际",
    "fb_message": "说明",
    "fb_item": "{label}：{value}",
    "gs_hidden_test": "（隐藏）",
    "gs_hidden_output": "隐藏测试用例：{label}",
    "gs_public_line": "{id}：{total} 个公开测试用例中通过 {passed} 个",
    "gs_hidden_count": "；{hidden} 个隐藏测试用例：{when}",
    "gs_when_hidden": "不显示它们的结果",
    "gs_when_after_due_date": "截止日期之后显示它们的结果",
    "gs_when_after_published": "成绩发布时显示它们的结果",
    "gs_failure": "自动评分器无法给这份提交评分。这不是对你作业的评价；请告诉老师。",
    "gs_no_notebook": "你的提交里没有 .ipynb 文件；请上传你的实验 notebook。",
    "gs_several": "提交了 {count} 个 notebook；评分的是 {name}。",
    "rp_title": "班级报告：{title}",
    "rp_meta": "实验 {lab}，已评分的提交 {count} 份，来自 {gradebook}；生成于 {when}。",
    "rp_h_scores": "分数分布",
    "rp_h_pass": "通过率",
    "rp_h_messages": "最常见的失败信息",
    "rp_h_exceptions": "最常见的异常",
    "rp_h_hidden": "公开测试用例全部通过、隐藏测试用例未通过",
    "rp_h_slowest": "最慢的提交",
    "rp_h_not_attempted": "没有作答",
    "rp_fig_scores": "总分",
    "rp_hover_scores": "{x} 分：{y} 名学生",
    "rp_axis_total": "总分（满分 {max}）",
    "rp_axis_students": "学生人数",
    "rp_scores_text": ("共 {count} 份提交。平均 {mean} 分（满分 {max}，{pct}），中位数 {median}"
                       "，最低 {low}，最高 {high}。{full} 人满分，{zero} 人 0 分。人数最多的分数"
                       "段是 {lo}～{hi} 分（{n} 人）。"),
    "rp_bin": "{lo}～{hi}",
    "rp_fig_exercises": "练习",
    "rp_passed_every": "全部测试用例通过",
    "rp_mean_score": "平均得分",
    "rp_axis_percent": "学生占比 / 得分占比（%）",
    "rp_hardest": ("最难的练习：{id}，{students} 名学生中有 {passed} 名（{pct}）通过了全部测试用"
                   "例；平均得分 {mean}。"),
    "rp_easiest": "最容易的练习：{id}，{students} 名中有 {passed} 名（{pct}）；平均得分 {mean}。",
    "rp_fig_cases": "测试用例",
    "rp_public_case": "公开测试用例",
    "rp_hidden_case": "隐藏测试用例",
    "rp_axis_passing": "通过的学生占比（%）",
    "rp_cases_text": ("{total} 个测试用例中有 {everyone} 个被所有学生通过。通过率最低（{pct}）的"
                      "是：{worst}"),
    "rp_and_more": "，另有 {more} 个。",
    "rp_end": "。",
    "rp_hidden_mark": "（隐藏）",
    "rp_kind_mean": "{kind}测试用例的平均通过率：{pct}。",
    "kind_public": "公开",
    "kind_hidden": "隐藏",
    "rp_none_of": "没有{what}。",
    "rp_tally_text": ("共 {count} 种不同的{what}；下表列出最常见的 {top} 种。分组时忽略数字；显"
                      "示最先见到的写法。"),
    "rp_failure_messages": "失败信息",
    "rp_exception_classes": "异常类",
    "rp_hidden_text": ("共 {total} 次：学生通过了某个练习的全部公开测试用例，却没有通过它的某个"
                       "隐藏测试用例。"),
    "rp_slowest_text": "每份提交的运行时间（各练习的秒数之和），{total} 份中最慢的 {shown} 份。",
    "rp_not_attempted_text": ("{total} 名学生中有 {count} 名什么都没做（每个练习都未作答或缺失，"
                              "或 notebook 无法读取）：{who}。"),
    "rp_nobody": "无",
    "rp_list": "、",
    "col_exercise": "练习",
    "col_students": "学生人数",
    "col_cases": "测试用例数",
    "col_exercises": "练习",
    "col_variants": "写法数",
    "col_exception": "异常",
    "col_who": "名单",
    "col_student": "学生",
    "col_seconds": "秒",
    "col_not_attempted": "未作答",
    "col_of_students": "学生总数",
    "col_passed_every": "全部通过",
    "col_pass_rate": "通过率",
    "col_mean_score": "平均分",
    "col_points": "满分",
    "col_kind": "类型",
    "col_passed": "通过",
}

MESSAGES = {"en": ENGLISH, "zh": CHINESE}
"""language -> key -> template."""

KINDS_ZH = {"bool": "布尔值", "number": "数值", "array": "数组", "sequence": "序列",
            "list": "列表", "tuple": "元组", "dict": "字典", "set": "集合",
            "frozenset": "不可变集合", "str": "字符串", "bytes": "字节串"}
"""The kinds of value a difference names (``"a list ([1, 2])"``), in Chinese."""


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


def kind_name(language: str, kind: str) -> str:
    """A kind of value (``"list"``, ``"number"``, a type's name) as ``language`` says it."""
    return KINDS_ZH.get(kind, kind) if language == "zh" else kind


def metadata_language(metadata: dict) -> str | None:
    """The language a notebook's or ``public_cases.json``'s metadata names, if any: its own
    ``language``, ``autograder.language`` (a released lab) or ``course_edition.language``
    (a Chinese chapter or lab source)."""
    for holder in (metadata, metadata.get("autograder") or {},
                   metadata.get("course_edition") or {}):
        if isinstance(holder, dict) and holder.get("language"):
            return language_of(holder["language"])
    return None
