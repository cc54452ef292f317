"""The Chinese edition (tools/i18n.py) stays in step with the English notebooks:
every markdown cell and every display literal of a code cell has a translation
of its *current* English text, the committed Chinese notebooks are exactly what
the build generates, both editions run the same code (the Chinese code cells
differ only in their display literals), links work from chapters/zh/, and the
glossary's terms are used. The second half checks the machinery itself on
altered copies and small made-up cells."""

from __future__ import annotations

import ast
import copy
import hashlib
import importlib.util
import json
import os
import re
import sys
from itertools import pairwise

import nbformat
import pytest

from .harness import ROOT, course_notebooks


def _load_tool():
    """tools/ is not a package: load tools/i18n.py by path (registered, for its dataclass)."""
    spec = importlib.util.spec_from_file_location("course_i18n", ROOT / "tools" / "i18n.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


i18n = _load_tool()
EDITIONS = [i18n.english_path(p) for p in i18n.EDITIONS]
IDS = list(i18n.EDITIONS)
LINK = re.compile(r"\]\(([^)\s]+)\)")
START = ROOT / "chapters" / "00_start_here.ipynb"


def english_and_catalog(english):
    return nbformat.read(english, as_version=4), i18n.load_catalog(english)


def first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def test_chapter_0_is_declared_and_every_edition_is_committed():
    assert START in EDITIONS
    for english in EDITIONS:
        assert english.exists(), f"{english} is declared in tools/i18n.py but does not exist"
        for made in (i18n.chinese_path(english), i18n.catalog_path(english)):
            assert made.exists(), (f"{made.relative_to(ROOT)} is missing: run "
                                   "`python tools/i18n.py status`, translate, then `build`")


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_every_markdown_cell_has_a_translation(english):
    nb, catalog = english_and_catalog(english)
    untranslated = [f"cell {c.id}: {first_line(c.source)!r}" for c in nb.cells
                    if c.cell_type == "markdown"
                    and (catalog["cells"].get(c.id) or {}).get("zh") is None]
    assert not untranslated, (
        f"{english.name}: markdown cells without a translation in "
        f"{i18n.catalog_path(english).relative_to(ROOT)}:\n  " + "\n  ".join(untranslated)
        + "\nRun `python tools/i18n.py status` to write stubs, then fill their zh fields.")


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_no_translation_is_older_than_its_english_cell(english):
    nb, catalog = english_and_catalog(english)
    stale = []
    for cell in nb.cells:
        entry = catalog["cells"].get(cell.id)
        current = hashlib.sha256(cell.source.encode("utf-8")).hexdigest()[:16]
        if cell.cell_type == "markdown" and entry and entry["en_hash"] != current:
            stale.append(f"cell {cell.id}, which now begins {first_line(cell.source)!r}")
    assert not stale, (
        f"{english.name}: English text changed since its translation was written:\n  "
        + "\n  ".join(stale) + "\nRun `python tools/i18n.py status`: it puts the new English "
        "beside the old (en_before); update zh, delete todo and en_before, then `build`.")


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_no_catalog_entry_is_left_todo_or_orphaned(english):
    nb, catalog = english_and_catalog(english)
    ids = {c.id for c in nb.cells if c.cell_type == "markdown"}
    todo = [cell_id for cell_id, entry in catalog["cells"].items() if "todo" in entry]
    orphans = [cell_id for cell_id in catalog["cells"] if cell_id not in ids]
    assert (todo, orphans) == ([], []), (
        f"{english.name}: entries still marked todo {todo}; entries for cells that are no "
        f"longer markdown cells of the English notebook {orphans} (`status` drops those)")


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_committed_chinese_notebook_is_what_the_build_generates(english):
    committed = i18n.chinese_path(english).read_text(encoding="utf-8")
    generated = i18n.notebook_text(i18n.translated_notebook(english))
    assert committed == generated, (
        f"{i18n.chinese_path(english).relative_to(ROOT)} differs from what its catalog "
        "generates: edit the catalog, not the notebook, then run `python tools/i18n.py build`")


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_both_editions_hold_the_same_code_cells_but_for_their_display_literals(english):
    """Putting each en back for its zh in the committed Chinese cell gives the
    English cell exactly: a Chinese code cell cannot drift from its English one."""
    chinese = nbformat.read(i18n.chinese_path(english), as_version=4)
    nb, catalog = english_and_catalog(english)
    assert [(c.id, c.cell_type) for c in chinese.cells] == [(c.id, c.cell_type) for c in nb.cells]
    strings = catalog.get("strings", {})
    differ = []
    for en, zh in zip(nb.cells, chinese.cells, strict=True):
        if en.cell_type == "markdown":
            continue
        restored = (i18n.untranslated_code(zh.source, strings.get(en.id, []))
                    if en.cell_type == "code" else zh.source)
        if (restored, zh.metadata) != (en.source, en.metadata):
            differ.append(en.id)
    assert not differ, (f"code or raw cells {differ} of {english.name} differ between the "
                        "editions by more than their translated display literals")


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_every_display_literal_has_a_finished_translation(english):
    nb, catalog = english_and_catalog(english)
    problems = [p for p in i18n.string_problems(nb, catalog, i18n.name_of(english))
                if p.kind in ("literal missing", "literal todo")]
    assert not problems, (
        "\n".join(map(str, problems)) + "\nRun `python tools/i18n.py status` to write stubs, "
        "fill their zh fields (Python literals), delete todo, then `build`.")


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_no_display_literal_translation_is_stale_orphaned_or_malformed(english):
    nb, catalog = english_and_catalog(english)
    problems = [p for p in i18n.string_problems(nb, catalog, i18n.name_of(english))
                if p.kind in ("literal stale", "literal orphan", "literal malformed")]
    assert not problems, "\n".join(map(str, problems))


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_each_translated_literal_keeps_its_kind_and_placeholders(english):
    """Independent of translation_faults: each zh parses as one literal of en's
    kind, and its f-string placeholders are en's, read from the parsed trees."""
    _, catalog = english_and_catalog(english)
    wrong = []
    for cell_id, entries in catalog.get("strings", {}).items():
        for entry in entries:
            if entry.get("zh") is None:
                continue
            en, zh = (ast.parse(f"(\n{entry[side]}\n)", mode="eval").body for side in ("en", "zh"))
            fields = [ast.dump(v) for v in getattr(en, "values", [])
                      if isinstance(v, ast.FormattedValue)]
            zh_fields = [ast.dump(v) for v in getattr(zh, "values", [])
                         if isinstance(v, ast.FormattedValue)]
            if type(en) is not type(zh) or sorted(fields) != sorted(zh_fields):
                wrong.append(f"cell {cell_id}: {entry['zh']}")
    assert not wrong, "translations that changed kind or placeholders:\n" + "\n".join(wrong)


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_links_work_from_the_chinese_notebook_and_prefer_chinese_editions(english):
    chinese = i18n.chinese_path(english)
    nb = nbformat.read(chinese, as_version=4)
    targets = [t.split("#")[0] for c in nb.cells if c.cell_type == "markdown"
               for t in LINK.findall(c.source) if "://" not in t and not t.startswith("#")]
    assert targets or english != i18n.EDITIONS[0], (
        "expected relative links (the course map) in the Chinese chapter 0")
    broken = [t for t in targets if not (chinese.parent / t).exists()]
    assert not broken, f"{chinese.name}: links that lead nowhere from {chinese.parent}: {broken}"
    translated = {e.resolve() for e in EDITIONS}
    to_english = [t for t in targets if (chinese.parent / t).resolve() in translated]
    assert not to_english, f"links to English notebooks that have a Chinese edition: {to_english}"


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_glossary_terms_are_rendered_with_their_chinese_term(english):
    nb, catalog = english_and_catalog(english)
    problems = i18n.glossary_problems(nb, catalog, i18n.name_of(english), i18n.load_glossary())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_one_term_per_concept_no_refused_variant(english):
    nb, catalog = english_and_catalog(english)
    problems = i18n.variant_problems(nb, catalog, i18n.name_of(english), i18n.load_glossary())
    assert not problems, "\n".join(problems)


def test_a_refused_variant_is_found_in_prose_and_not_in_code():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("ranks (rank)")])
    nb.cells[0]["id"] = "c1"
    glossary = {"variants": {"全规约": "全归约"}}
    catalog = {"cells": {"c1": {"zh": ["环形全规约，代码里的 `全规约` 不算"]}}, "strings": {}}
    assert len(i18n.variant_problems(nb, catalog, "x.ipynb", glossary)) == 1
    catalog["cells"]["c1"]["zh"] = ["环形全归约，代码里的 `全规约` 不算"]
    assert i18n.variant_problems(nb, catalog, "x.ipynb", glossary) == []


def test_glossary_is_well_formed_and_holds_the_source_texts_terms():
    glossary = i18n.load_glossary()
    terms = glossary["terms"]
    for must in ("计算图", "自动微分", "反向传播", "分布式训练", "数据并行", "模型并行",
                 "流水线并行", "混合精度", "损失缩放", "主权重", "算子融合", "内存复用", "拓扑排序",
                 "梯度"):
        assert must in terms.values(), f"the glossary lacks the source text's term {must}"
    odd = [k for k in terms if k != k.lower() or "-" in k or k != k.strip()]
    assert not odd, f"glossary keys must be lower case, without hyphens: {odd}"
    not_chinese = [v for v in terms.values() if not re.search(r"[\u4e00-\u9fff]", v)]
    assert not not_chinese, f"glossary values without a Chinese character: {not_chinese}"
    for notebook, cells in glossary["exceptions"].items():
        for cell_id, allowed in cells.items():
            assert set(allowed) <= set(terms), f"exception in {notebook}/{cell_id}: unknown term"


def test_the_harness_executes_the_chinese_notebooks():
    found = set(course_notebooks())
    missing = [i18n.chinese_path(e) for e in EDITIONS if i18n.chinese_path(e) not in found]
    assert not missing, f"tests/notebooks/harness.py does not pick up {missing}"


# --- the machinery, on altered copies -------------------------------------------------------


def start_here():
    return english_and_catalog(START)


def first_markdown(nb):
    return next(c for c in nb.cells if c.cell_type == "markdown")


def test_an_edited_english_cell_is_reported_stale_with_its_id_and_new_first_line():
    nb, catalog = start_here()
    cell = first_markdown(nb)
    cell.source = "# A new title\n\n" + cell.source
    problems = i18n.catalog_problems(nb, catalog, "chapters/00_start_here.ipynb")
    assert [(p.cell_id, p.kind) for p in problems] == [(cell.id, "stale")]
    assert cell.id in str(problems[0]) and "'# A new title'" in str(problems[0])


def test_status_stubs_let_a_translator_finish_a_stale_and_a_new_cell():
    nb, catalog = start_here()
    stale = first_markdown(nb)
    old_english = stale.source
    stale.source += "\n\nOne more sentence."
    nb.cells.append(nbformat.v4.new_markdown_cell("## A new section"))
    new = nb.cells[-1]
    stubbed = i18n.with_stubs(nb, copy.deepcopy(catalog))
    name = "chapters/00_start_here.ipynb"
    assert {(p.cell_id, p.kind) for p in i18n.catalog_problems(nb, stubbed, name)} == {
        (stale.id, "todo"), (new.id, "missing")}
    assert stubbed["cells"][stale.id]["en_before"] == old_english.split("\n")
    assert stubbed["cells"][stale.id]["zh"] == catalog["cells"][stale.id]["zh"]
    assert stubbed["cells"][new.id]["en"] == ["## A new section"]
    for cell_id, zh in ((stale.id, ["已更新"]), (new.id, ["## 新的一节"])):
        entry = stubbed["cells"][cell_id]
        entry["zh"] = zh
        entry.pop("todo")
        entry.pop("en_before", None)
    assert i18n.catalog_problems(nb, stubbed, name) == []


def test_a_removed_cell_leaves_an_orphan_that_status_drops():
    nb, catalog = start_here()
    gone = first_markdown(nb)
    nb.cells.remove(gone)
    problems = i18n.catalog_problems(nb, catalog, "x")
    assert [(p.cell_id, p.kind) for p in problems] == [(gone.id, "orphan")]
    assert gone.id not in i18n.with_stubs(nb, catalog)["cells"]


def test_links_are_rebased_from_the_english_folder_and_switch_to_chinese_editions(monkeypatch):
    monkeypatch.setattr(i18n, "EDITIONS", (START,))  # chapter 1 untranslated, chapter 0 not
    text = ("[c1](01_computational_graphs.ipynb#top) [c0](00_start_here.ipynb) "
            "[lab](../labs/lab1_graph/) [web](https://pytorch.org/docs) [here](#exercises)")
    rebased = i18n.rebased_links(text, START)
    assert LINK.findall(rebased) == ["../01_computational_graphs.ipynb#top", "00_start_here.ipynb",
                                     "../../labs/lab1_graph/", "https://pytorch.org/docs",
                                     "#exercises"]
    here = i18n.chinese_path(START).parent
    for target in LINK.findall(rebased)[:3]:
        assert (here / target.split("#")[0]).exists()
    assert os.path.samefile(here / "00_start_here.ipynb", i18n.chinese_path(START))


def test_glossary_check_finds_a_missing_term_and_ignores_code_and_link_targets():
    terms = {"gradient": "梯度", "gradient compression": "梯度压缩", "lab": "实验"}
    assert i18n.glossary_misses("Gradients flow back.", "导数反向流动。", terms) == ["gradient"]
    assert i18n.glossary_misses("Gradient compression.", "梯度变小。", terms) == [
        "gradient compression"]
    assert i18n.glossary_misses("Run `make lab` in JupyterLab, see [x](../labs/).", "运行",
                                terms) == []
    assert i18n.glossary_misses("Open the lab.", "打开实验。", terms) == []


def test_a_build_refuses_an_incomplete_catalog_and_says_what_to_run(tmp_path, monkeypatch):
    nb, catalog = start_here()
    del catalog["cells"][first_markdown(nb).id]
    monkeypatch.setattr(i18n, "load_catalog", lambda english: catalog)
    with pytest.raises(i18n.CatalogIncomplete, match="tools/i18n.py status"):
        i18n.translated_notebook(START)


def test_the_readmes_link_each_other_and_the_chinese_readmes_links_resolve():
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "](README.zh-CN.md)" in english.splitlines()[0]
    assert "](README.md)" in chinese.splitlines()[0]
    targets = [t for t in LINK.findall(chinese) if "://" not in t and not t.startswith("#")]
    assert [t for t in targets if not (ROOT / t).exists()] == []
    assert "chapters/zh/00_start_here.ipynb" in targets


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_no_translation_wraps_a_line_inside_chinese_text(english):
    """Markdown joins a wrapped line with a space, which shows as a gap inside a
    Chinese sentence: a paragraph of Chinese stays on one line. (Lines of a fenced
    code block are code, with Chinese comments: they are left alone.)"""
    wide = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
    continues = re.compile(r"^\s*[^\s*|#>\-\d`]")
    fenced = re.compile(r"^\s*```.*?^\s*```", re.DOTALL | re.MULTILINE)
    wrapped = []
    for cell_id, entry in i18n.load_catalog(english)["cells"].items():
        prose = fenced.sub("", "\n".join(entry.get("zh") or []))
        zh = prose.split("\n")
        wrapped += [f"cell {cell_id}: {line!r}" for line, after in pairwise(zh)
                    if line.strip() and wide.search(line[-1]) and continues.match(after)
                    and not line.lstrip().startswith(("|", "#"))]
    assert not wrapped, "Chinese lines broken mid-paragraph (join them):\n  " + "\n  ".join(wrapped)


@pytest.mark.parametrize("english", EDITIONS, ids=IDS)
def test_bold_in_the_chinese_edition_renders(english):
    """CommonMark closes ``**`` only when it is "right-flanking": after Chinese punctuation
    it must be followed by a space or punctuation, so ``**先预测，再运行。**下面`` shows
    the asterisks; write ``**先预测，再运行**。下面``. Code and math count as one letter each."""
    import mistune

    render = mistune.create_markdown(escape=False)
    nb = nbformat.read(i18n.chinese_path(english), as_version=4)
    stray = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            prose = re.sub(r"`[^`]*`|\$\$.*?\$\$|\$[^$\n]*\$", "x", cell.source, flags=re.S)
            html = render(prose)
            if "**" in html:
                at = html.index("**")
                stray.append(f"{cell.id}: ...{html[max(at - 30, 0):at + 30]}...")
    assert not stray, "bold markers that do not close:\n" + "\n".join(stray)


# --- display literals, on made-up cells -----------------------------------------------------

CELL = """%env OMP_NUM_THREADS=1
label = "Loss per step"
claim(f"The loss fell by {drop:.1%} in {steps} steps", drop > 0.5, evidence)
print("节点数", "nodes:", len(nodes), "-" * 40, f"{x:.2f}")
ax.plot(xs, ys, label="Loss per step", color="tab:blue")
check("graph_order")
print("Two halves "
      "of one sentence")
"""
SHOWN = ['f"The loss fell by {drop:.1%} in {steps} steps"', '"nodes:"', '"Loss per step"',
         '"Two halves "\n      "of one sentence"']


def test_display_literals_are_claims_prints_and_display_keywords_with_a_word():
    literals = i18n.display_literals(CELL)
    assert [literal.text for literal in literals] == SHOWN
    assert all(CELL[literal.start:literal.end] == literal.text for literal in literals)
    # the assignment's "Loss per step" is not displayed; the label's is, after its line's start
    assert literals[2].start > CELL.index("ax.plot")


FIGURE_CELL = """vizkit.show(fig, "Loss falls as steps pass")
show(fig, summary=f"The curve ends at {loss:.3f} after training")
draw(graph, "Graph with three nodes", highlight=hot)
vizkit.show("Not a summary either", fig)
show(fig, drawing.summary + " Both graphs match.")
save(fig, "Second argument of another call")
readout.value = f"<b>{depth} layers</b> need {mib:.1f} MiB"
slider.description = box.value = "Micro-batches"
readout.value += " more text"
value = "Plain variable here"
readout.layout = "Some layout"
note.value = "Done" if ok else "Not yet done"
"""
FIGURE_SHOWN = ['"Loss falls as steps pass"', 'f"The curve ends at {loss:.3f} after training"',
                '"Graph with three nodes"', 'f"<b>{depth} layers</b> need {mib:.1f} MiB"',
                '"Micro-batches"']


def test_figure_summaries_and_widget_texts_are_display_literals_only_as_literals():
    """show/draw's second argument or summary=, and a literal assigned with = to
    .value or .description; not a summary built by +, not another argument, not
    an augmented assignment, a plain name, another attribute or a conditional."""
    literals = i18n.display_literals(FIGURE_CELL)
    assert [literal.text for literal in literals] == FIGURE_SHOWN
    assert all(FIGURE_CELL[literal.start:literal.end] == literal.text for literal in literals)


def test_a_translated_widget_text_and_summary_reverse_exactly():
    entries = finished([('"Loss falls as steps pass"', '"损失随步数下降"'),
                        ('"Micro-batches"', '"微批次"'),
                        ('f"<b>{depth} layers</b> need {mib:.1f} MiB"',
                         'f"<b>{depth} 层</b>需要 {mib:.1f} MiB"')])
    chinese = i18n.translated_code(FIGURE_CELL, entries)
    assert 'vizkit.show(fig, "损失随步数下降")' in chinese
    assert 'slider.description = box.value = "微批次"' in chinese
    assert 'readout.value = f"<b>{depth} 层</b>需要 {mib:.1f} MiB"' in chinese
    assert 'value = "Plain variable here"' in chinese and '" Both graphs match."' in chinese
    assert i18n.untranslated_code(chinese, entries) == FIGURE_CELL


TABLE_CELL = """print(text_table(rows, headers=("op", "finite diff", f"{n} inputs")))
labels = {"fp16_sync": "float16, no gradient sync", "fp32": ("float32", "reference run")}
display(Markdown(markdown_table(headers=["situation"], rows=[("many ranks", "**stop here**")])))
print(("Tuple printed", ["List printed"]))
settings = {"mode": "Not shown anywhere"}
run_labels = {"fp32": "Reference float32"}
mislabels = ("Not a label name",)
names = ("Plain tuple here", "Another one")
fig(labels=label_map, headers=make_heads("Built by a call"))
print({"Key not shown": 1})
line_figure(series, x_title="Steps taken", y_title=f"{unit} per step")
"""
TABLE_SHOWN = ['"finite diff"', '"float16, no gradient sync"', '"float32"', '"reference run"',
               '"situation"', '"many ranks"', '"**stop here**"', '"Tuple printed"',
               '"List printed"', '"Reference float32"', '"Steps taken"', 'f"{unit} per step"']


def test_texts_inside_a_displayed_tuple_list_or_dict_are_display_literals():
    """headers=, rows=, labels=, x_title= and y_title= show their texts, as do a tuple, list or dict
    written out in a display position or assigned to ``labels``/``headers`` (or a
    name ending in ``_labels``/``_headers``), nested
    ones included; a dict's keys stay (the code looks values up by them), and a
    name or a call in such a position, or a tuple assigned to another name, shows
    nothing. "op" has no 3-letter word and f"{n} inputs" one after its placeholder."""
    literals = i18n.display_literals(TABLE_CELL)
    assert [literal.text for literal in literals] == TABLE_SHOWN[:1] + ['f"{n} inputs"'] + \
        TABLE_SHOWN[1:]
    entries = finished([('"float16, no gradient sync"', '"float16，不同步梯度"'),
                        ('"finite diff"', '"有限差分"')])
    chinese = i18n.translated_code(TABLE_CELL, entries)
    assert 'labels = {"fp16_sync": "float16，不同步梯度"' in chinese
    assert 'headers=("op", "有限差分", f"{n} inputs")' in chinese
    assert i18n.untranslated_code(chinese, entries) == TABLE_CELL


def test_magic_lines_are_blanked_only_when_the_cell_needs_it():
    """A line that starts with ``%`` inside brackets is Python (an operator), not a magic."""
    cell = 'print("Steps left:", total\n      % period)'
    assert [literal.text for literal in i18n.display_literals(cell)] == ['"Steps left:"']
    assert [literal.text for literal in i18n.display_literals("%env A=1\n" + cell)] == [
        '"Steps left:"']


def test_a_cell_that_is_not_python_has_no_display_literals():
    assert i18n.display_literals("%%bash\necho 'Hello there'\nprint('not python') |") == []


def finished(pairs):
    return [{"en": en, "zh": zh} for en, zh in pairs]


def test_translated_code_replaces_display_literals_in_place_and_reverses_exactly():
    entries = finished([('"Loss per step"', '"每步的损失"'), ('"nodes:"', '"节点："'),
                        ('"Two halves "\n      "of one sentence"', '"一句话的两半"')])
    entries.append({"en": SHOWN[0], "zh": 'f"{steps} 步内损失下降了 {drop:.1%}"', "todo": True})
    chinese = i18n.translated_code(CELL, entries)
    assert chinese == CELL.replace(
        'print("节点数", "nodes:"', 'print("节点数", "节点："').replace(
        'label="Loss per step"', 'label="每步的损失"').replace(
        '"Two halves "\n      "of one sentence"', '"一句话的两半"')
    assert 'label = "Loss per step"' in chinese and "The loss fell" in chinese  # todo: English
    assert i18n.untranslated_code(chinese, entries) == CELL


@pytest.mark.parametrize("zh, keep, fault", [
    ('f"{b:.2f} 中的 {a}"', False, None),
    ('f"{a} 中的 {b}"', False, "placeholders"),
    ('"{a} 中的 {b:.2f}"', False, "f-string"),
    ('f"{a} of {b:.2f}"', False, "no Chinese"),
    ('f"{a} of {b:.2f}"', True, None),
    ('"未闭合', False, "not one Python string literal"),
    ('print("中文")', False, "not one Python string literal"),
])
def test_a_translation_must_be_a_literal_of_the_same_kind_with_the_same_placeholders(
        zh, keep, fault):
    entry = {"en": 'f"{a} of {b:.2f}"', "zh": zh, **({"keep": True} if keep else {})}
    faults = i18n.translation_faults(entry)
    assert (faults == []) if fault is None else any(fault in f for f in faults), faults


def notebook_of(*sources):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return nb


def test_status_stubs_a_new_and_a_changed_literal_marks_a_stale_one_and_drops_a_gone_cell():
    nb = notebook_of('print("Old sentence here")\nprint("Kept sentence")', 'print("Removed text")')
    changed, emptied = nb.cells
    catalog = {"cells": {}, "strings": {
        changed.id: finished([('"Old sentence here"', '"旧句子"'), ('"Kept sentence"', '"保留"')]),
        emptied.id: finished([('"Removed text"', '"删掉的"')]),
        "gone-cell": finished([('"Gone"', '"没了"')])}}
    assert i18n.string_problems(nb, catalog, "x") == [i18n.Problem("x", "gone-cell",
                                                                   "literal orphan", "")]
    changed.source = ('print("New sentence here")\nprint("Kept sentence")\n'
                      'print("Another sentence")')
    emptied.source = "print(len(xs))"
    stubbed = i18n.with_string_stubs(nb, copy.deepcopy(catalog))
    assert stubbed["strings"][changed.id] == [
        {"en": '"New sentence here"', "en_before": '"Old sentence here"', "zh": '"旧句子"',
         "todo": True},
        {"en": '"Kept sentence"', "zh": '"保留"'},
        {"en": '"Another sentence"', "zh": None, "todo": True}]
    assert stubbed["strings"][emptied.id][0]["stale"] and "gone-cell" not in stubbed["strings"]
    assert [(p.cell_id, p.kind, p.english) for p in i18n.string_problems(nb, stubbed, "x")] == [
        (changed.id, "literal todo", '"New sentence here"'),
        (changed.id, "literal missing", '"Another sentence"'),
        (emptied.id, "literal stale", '"Removed text"')]
    entries = stubbed["strings"][changed.id]
    entries[0].update(zh='"新句子"')
    entries[2].update(zh='"又一句"')
    for entry in entries:
        entry.pop("todo", None)
        entry.pop("en_before", None)
    del stubbed["strings"][emptied.id]
    assert i18n.string_problems(nb, stubbed, "x") == []


def test_check_refuses_a_todo_literal_and_build_refuses_a_malformed_one(monkeypatch):
    nb, catalog = start_here()
    cell_id, entries = next(iter(catalog["strings"].items()))
    entries[0]["todo"] = True
    monkeypatch.setattr(i18n, "load_catalog", lambda english: catalog)
    assert any(cell_id in r and "marked todo" in r
               for r in i18n.out_of_date((i18n.name_of(START),)))
    del entries[0]["todo"]
    entries[0]["zh"] = entries[0]["en"] + " +"
    with pytest.raises(i18n.CatalogIncomplete, match="not one Python string literal"):
        i18n.translated_notebook(START)


def test_the_glossary_check_reads_translated_literals():
    nb = notebook_of('print(f"Gradient of {name}:", g)')
    catalog = {"cells": {}, "strings": {nb.cells[0].id: finished([
        ('f"Gradient of {name}:"', 'f"{name} 的导数："')])}}
    glossary = {"terms": {"gradient": "梯度", "name": "名字"}, "exceptions": {}}
    problems = i18n.glossary_problems(nb, catalog, "x", glossary)
    assert len(problems) == 1 and "'gradient'" in problems[0]


def test_every_chinese_label_names_a_label_the_english_code_writes():
    """chapters/zh/labels.json (vizkit.strings.label) holds no stale names: each one
    appears as a string literal in an English chapter or the chapters' code."""
    table = json.loads((ROOT / "chapters" / "zh" / "labels.json").read_text(encoding="utf-8"))
    written = set()
    sources = [c.source for p in sorted((ROOT / "chapters").glob("0*.ipynb"))
               for c in nbformat.read(p, as_version=4).cells if c.cell_type == "code"]
    sources += [p.read_text(encoding="utf-8") for p in (ROOT / "chapters").rglob("*.py")]
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        written |= {n.value for n in ast.walk(tree)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    stale = sorted(set(table["labels"]) - written)
    assert not stale, f"labels.json names labels no code writes: {stale}"
    assert all(isinstance(v, str) and v for v in table["labels"].values())
