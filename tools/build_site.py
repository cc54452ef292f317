"""Build the static course site: every chapter notebook, executed, as HTML, in
English and in Chinese.

    python tools/build_site.py                      # all chapters -> build/site/
    python tools/build_site.py --out DIR chapters/00_start_here.ipynb   # one chapter, both editions

Layout. The English pages sit at the site's top (``index.html``,
``00_start_here.html``, ...) as they always have, so existing links keep
working; each chapter's Chinese edition (``chapters/zh/<name>.ipynb``, made by
``tools/i18n.py``) is published under ``zh/`` with the same file name and its
own ``zh/index.html``. Same names in both folders make the language switch at
the top of every page a plain ``zh/<page>`` or ``../<page>`` link, and the
Chinese pages get ``<html lang="zh-CN">`` and Chinese notes.

Each notebook is executed in a fresh kernel (in its own folder, as JupyterLab
would) and exported with nbconvert's ``lab`` template. The pages work offline:

* plotly figures carry a ``text/html`` representation that calls
  ``Plotly.newPlot`` (see ``vizkit/figures.py``); the site ships the
  ``plotly.min.js`` that comes with the installed plotly package next to the
  pages and loads it in each page's ``<head>``;
* Graphviz drawings are inline SVG;
* formulas are typeset by the MathJax 2 copy of the ``jupyter-server-mathjax``
  package, shipped in ``mathjax/`` beside the pages (nbconvert would load it
  from a CDN);
* predictions (``with prediction(...)`` cells, tagged ``hide-input``) are
  shown without their source: the guess box and its script work offline;
* practice self-checks (``check(...)`` cells) need a live kernel too: each gets a
  note saying so above the output of the unchanged stub;
* sliders need a live kernel, so the saved widget state (whose viewer would be
  fetched from a CDN) and require.js are dropped: a page shows the output each
  widget produced when the notebook ran.

Links between chapters (``02_....ipynb``) are rewritten to the pages
(``02_....html``), so a Chinese chapter links to Chinese pages (and to an
English page, ``../02_....html``, where its link still points to the English
notebook); links into ``labs/`` point to the lab list of the page's own index,
since labs are worked in JupyterLab, not read. plotly.js and MathJax are
shipped once, at the top; the Chinese pages load them from ``../``.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from nbconvert.preprocessors import TagRemovePreprocessor

ROOT = Path(__file__).resolve().parents[1]
PLOTLY_JS = "plotly.min.js"
# the shipped MathJax (jupyter-server-mathjax) holds only the STIX-Web fonts: without this
# MathJax asks for its TeX font files, finds none, and shows a prime as "[Math Processing Error]"
MATHJAX_FONTS = ('<script type="text/x-mathjax-config">MathJax.Hub.Config({"HTML-CSS": '
                 '{availableFonts: [], preferredFont: null, webFont: "STIX-Web", '
                 'imageFont: null}});</script>')
# wide graph drawings scroll sideways at full size instead of running off the page
FIT_SVG = "<style>.jp-RenderedSVG, .jp-RenderedImage { overflow-x: auto; }</style>"
SWITCH_CSS = ("<style>.language-switch { text-align: right; padding: .4em 1.5em 0; "
              "font-size: 90%; }</style>")
MATHJAX_URL = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
WIDGET_MIMETYPE = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = ('<p><em>[An interactive control stands here: open the notebook in JupyterLab '
               '(<code>make lab</code>) to use it. The output below is from its default '
               'value.]</em></p>')
SELF_CHECK = re.compile(r"^\s*check\(", re.MULTILINE)
SELF_CHECK_NOTE = ('<p><em>[A self-check stands here: it runs your answer in a live kernel. Open '
                   'the notebook in JupyterLab (<code>make lab</code>), write the function above '
                   'and run this cell. The output below is the check of the unchanged '
                   'stub.]</em></p>')
LABS = ["lab1_graph", "lab2_autodiff", "lab3_distributed", "lab4_amp"]


@dataclass(frozen=True)
class Edition:
    """Everything that differs between the English and the Chinese pages."""

    language: str         # the pages' <html lang>, and hreflang in the switch
    name: str             # what the switch calls this edition, in its own language
    folder: str           # where its pages sit inside the site: "" or "zh/"
    widget_note: str
    self_check_note: str
    title: str            # of the index page
    intro: str            # the index page's first paragraph (HTML)
    chapters_heading: str
    labs_heading: str
    labs_intro: str
    lab_item: str         # one lab in the index's list; {lab} is the lab's folder name

    def up(self) -> str:
        """From a page of this edition back to the site's top folder."""
        return "../" * self.folder.count("/")


ENGLISH = Edition(
    language="en", name="English", folder="",
    widget_note=WIDGET_NOTE, self_check_note=SELF_CHECK_NOTE,
    title="How a deep-learning training framework works inside",
    intro="""Computational graphs (计算图), automatic differentiation (自动微分), distributed
training (分布式训练) and mixed precision (混合精度), each with a small reference engine checked
against PyTorch, then joined in one training loop. These pages are the executed
notebooks, for reading without a Jupyter server: figures are interactive, sliders need a
live kernel (<code>make lab</code>).""",
    chapters_heading="Chapters", labs_heading="Labs",
    labs_intro="Labs are worked in JupyterLab, where each exercise has a self-check.",
    lab_item="<code>labs/{lab}/</code> (open with <code>make lab</code>)")

CHINESE = Edition(
    language="zh-CN", name="中文", folder="zh/",
    widget_note=('<p><em>[此处有一个交互控件（如滑块）：在 JupyterLab 里打开 notebook'
                 '（<code>make lab LANG=zh</code>）才能操作它。'
                 '下面是它取默认值时的输出。]</em></p>'),
    self_check_note=('<p><em>[此处是一个自测：它要在运行中的内核里执行你的答案。请在 JupyterLab '
                     '里打开 notebook（<code>make lab LANG=zh</code>），补全上面的函数，再运行'
                     '这个单元格。下面的输出是对尚未改动的初始代码的检查结果。]</em></p>'),
    title="深入深度学习训练框架",
    # no line breaks inside Chinese text: a browser would show each as a space
    intro=("计算图（computational graph）、自动微分（automatic differentiation）、分布式训练"
           "（distributed training）和混合精度（mixed precision）：每一部分都配有一个用 NumPy "
           "从零写成、与 PyTorch 逐项对照的小型参考引擎，最后在一个训练循环里把四者串起来。"
           "这些页面是执行过的 notebook，不开 Jupyter 服务器也能阅读：图表可以交互，滑块则需要"
           "运行中的内核（<code>make lab LANG=zh</code>）。"),
    chapters_heading="章节", labs_heading="实验",
    labs_intro=("实验要在 JupyterLab 里做（<code>make lab LANG=zh</code>），每个练习都配有自测。"
                "每个实验后面的命令生成它的中文学生版，写到 <code>build/release/zh/</code> 下。"),
    lab_item=("<code>labs/{lab}/source.zh.ipynb</code>（学生版："
              "<code>python -m autograder release {lab} --lang zh</code>）"))

EDITIONS = (ENGLISH, CHINESE)


def plotly_js_path() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / PLOTLY_JS


def mathjax_dir() -> Path:
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


def chinese_edition(english: Path) -> Path:
    """chapters/NN_x.ipynb -> chapters/zh/NN_x.ipynb, the file tools/i18n.py generates."""
    return english.parent / "zh" / english.name


def execute(path: Path, edition: Edition = ENGLISH, timeout: int = 600):
    nb = nbformat.read(path, as_version=4)
    # the kernel is told the edition's language, as a Jupyter server tells it the notebook's path
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute(
        env={**os.environ, "COURSE_LANG": edition.language[:2]})
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if WIDGET_MIMETYPE in out.get("data", {}):
                out["data"] = {"text/html": edition.widget_note, "text/plain": edition.widget_note}
    mark_self_checks(nb, edition.self_check_note)
    return nb


def mark_self_checks(nb, note_html: str = SELF_CHECK_NOTE) -> int:
    """Put a note before the output of every practice ``check(...)`` cell: on a static
    page the check shows the stub's "not attempted", and answering needs a kernel.
    Returns how many cells were marked."""
    marked = 0
    for cell in nb.cells:
        if cell.cell_type == "code" and SELF_CHECK.search(cell.source):
            note = nbformat.v4.new_output("display_data", data={
                "text/html": note_html, "text/plain": note_html})
            cell.outputs = [note, *cell.get("outputs", [])]
            marked += 1
    return marked


def error_outputs(nb) -> list[str]:
    return [f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
            for i, cell in enumerate(nb.cells) for out in cell.get("outputs", [])
            if out.get("output_type") == "error"]


# a chapter in the same folder (02_x.ipynb) or, from a Chinese page, an English one (../02_x.ipynb)
_CHAPTER_LINK = re.compile(r'href="((?:\.\./)?(?:\d\d|appendix)_[A-Za-z0-9_]+)\.ipynb(#[^"]*)?"')
# ../labs/L/... from an English chapter, ../../labs/L/... from a Chinese one
_LAB_LINK = re.compile(r'href="(?:\.\./)+labs/([A-Za-z0-9_]+)[^"]*"')


def language_switch(page: str, here: Edition, others: list[Edition]) -> str:
    """The line at the top of a page: this edition's name, then a link to ``page`` (the
    same file name) in each other edition, e.g. ``English | 中文`` with 中文 a link."""
    items = [f'<span lang="{here.language}">{here.name}</span>']
    items += [f'<a href="{here.up()}{other.folder}{page}" hreflang="{other.language}" '
              f'lang="{other.language}">{other.name}</a>' for other in others]
    return '<nav class="language-switch">' + " | ".join(items) + "</nav>"


def alternate_links(page: str, here: Edition, others: list[Edition]) -> str:
    """``<link rel="alternate" hreflang>`` tags for the page's other editions."""
    return "".join(f'<link rel="alternate" hreflang="{other.language}" '
                   f'href="{here.up()}{other.folder}{page}">\n' for other in others)


def to_page(nb, title: str, edition: Edition = ENGLISH, page: str = "",
            others: list[Edition] = ()) -> str:
    """The notebook as one offline HTML page of ``edition``, named ``page``, with a
    language switch to the same page in each edition of ``others``."""
    up = edition.up()
    exporter = HTMLExporter(template_name="lab", mathjax_url=up + MATHJAX_URL)
    # a prediction's source holds its answer: the page shows only the guess box
    exporter.register_preprocessor(
        TagRemovePreprocessor(remove_input_tags={"hide-input"}, enabled=True), enabled=True)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    # nbconvert's language_code accepts only two-letter codes, so the tag is set here
    body = re.sub(r"<html[^>]*>", f'<html lang="{edition.language}">', body, count=1)
    head = f'{MATHJAX_FONTS}\n<script src="{up}{PLOTLY_JS}"></script>\n{FIT_SVG}\n{SWITCH_CSS}\n'
    body = body.replace("<head>", "<head>\n" + head + alternate_links(page, edition, others), 1)
    # require.js (from a CDN) only serves the widget viewer, which the site drops.
    body = body.replace(f'<script src="{exporter.require_js_url}"></script>', "")
    if others:
        body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + "\n" + language_switch(
            page, edition, others), body, count=1)
    body = _CHAPTER_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)
    return _LAB_LINK.sub(lambda m: f'href="index.html#{m.group(1)}"', body)


def notebook_title(nb, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def index_page(entries: list[tuple[str, str]], edition: Edition = ENGLISH,
               others: list[Edition] = ()) -> str:
    chapters = "\n".join(f'<li><a href="{html.escape(page)}">{html.escape(title)}</a></li>'
                         for page, title in entries)
    labs = "\n".join(f'<li id="{lab}">{edition.lab_item.format(lab=lab)}</li>' for lab in LABS)
    switch = language_switch("index.html", edition, others) if others else ""
    return f"""<!DOCTYPE html>
<html lang="{edition.language}"><head><meta charset="utf-8">
<title>{edition.title}</title>
{alternate_links("index.html", edition, others)}<style>body {{ font-family: system-ui, sans-serif;
max-width: 46em; margin: 3em auto; line-height: 1.5; padding: 0 1em; }} li {{ margin: .4em 0; }}
code {{ white-space: nowrap; }}
.language-switch {{ text-align: right; font-size: 90%; }}</style></head>
<body>
{switch}
<h1>{edition.title}</h1>
<p>{edition.intro}</p>
<h2>{edition.chapters_heading}</h2>
<ol start="0">
{chapters}
</ol>
<h2>{edition.labs_heading}</h2>
<p>{edition.labs_intro}</p>
<ul>
{labs}
</ul>
</body></html>
"""


def editions_of(english: Path) -> dict[Edition, Path]:
    """The notebook behind each edition of one chapter: the English one and, where
    tools/i18n.py has generated it, the Chinese one."""
    chinese = chinese_edition(english)
    return {ENGLISH: english, **({CHINESE: chinese} if chinese.exists() else {})}


def publish(path: Path, edition: Edition, others: list[Edition], out: Path) -> str:
    """Execute one notebook and write its page into ``edition``'s folder; returns its title."""
    started = time.perf_counter()
    nb = execute(path, edition)
    errors = error_outputs(nb)
    if errors:
        raise SystemExit(f"{path.name} ({edition.name}) shows errors, not publishing it:\n"
                         + "\n".join(errors))
    title = notebook_title(nb, path.stem)
    page = out / edition.folder / f"{path.stem}.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(to_page(nb, title, edition, page.name, others), encoding="utf-8")
    print(f"{path.name} -> {page} ({time.perf_counter() - started:.1f} s)")
    return title


def build(notebooks: list[Path], out: Path) -> dict[Edition, list[tuple[str, str]]]:
    """Publish each English chapter in ``notebooks`` and its Chinese edition, then one
    index per language. Returns each edition's (page, title) entries."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js_path(), out / PLOTLY_JS)
    shutil.copytree(mathjax_dir(), out / "mathjax", dirs_exist_ok=True)
    entries: dict[Edition, list[tuple[str, str]]] = {edition: [] for edition in EDITIONS}
    for english in notebooks:
        sources = editions_of(english)
        for edition, path in sources.items():
            others = [other for other in sources if other is not edition]
            entries[edition].append((f"{path.stem}.html", publish(path, edition, others, out)))
    published = [edition for edition in EDITIONS if entries[edition]]
    for edition in published:
        others = [other for other in published if other is not edition]
        (out / edition.folder / "index.html").write_text(
            index_page(entries[edition], edition, others), encoding="utf-8")
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="English chapter notebooks to publish, each with its Chinese "
                             "edition where chapters/zh/ has one (default: chapters/*.ipynb)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or sorted((ROOT / "chapters").glob(
        "*.ipynb"))
    for path in notebooks:
        if path.parent.name == "zh":
            parser.error(f"{path.name} in chapters/zh/ is a Chinese edition: name the English "
                         f"notebook (chapters/{path.name}) instead; its Chinese edition is "
                         "published beside it, under zh/")
    for edition, entries in build(notebooks, args.out).items():
        if entries:
            print(f"site ({edition.name}): {args.out / edition.folder / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
