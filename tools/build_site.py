"""Build the static course site: every chapter notebook, executed, as HTML.

    python tools/build_site.py                      # all chapters -> build/site/
    python tools/build_site.py --out DIR chapters/00_start_here.ipynb

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
* practice self-checks (``check(...)`` cells) need a live kernel too: each gets a
  note saying so above the output of the unchanged stub;
* sliders need a live kernel, so the saved widget state (whose viewer would be
  fetched from a CDN) and require.js are dropped: a page shows the output each
  widget produced when the notebook ran.

Links between chapters (``02_....ipynb``) are rewritten to the pages
(``02_....html``); links into ``../labs/`` point to the index's lab list,
since labs are worked in JupyterLab, not read.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

ROOT = Path(__file__).resolve().parents[1]
PLOTLY_JS = "plotly.min.js"
# wide graph drawings scroll sideways at full size instead of running off the page
FIT_SVG = "<style>.jp-RenderedSVG, .jp-RenderedImage { overflow-x: auto; }</style>"
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


def plotly_js_path() -> Path:
    import plotly

    return Path(plotly.__file__).parent / "package_data" / PLOTLY_JS


def mathjax_dir() -> Path:
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


def execute(path: Path, timeout: int = 600):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if WIDGET_MIMETYPE in out.get("data", {}):
                out["data"] = {"text/html": WIDGET_NOTE, "text/plain": WIDGET_NOTE}
    mark_self_checks(nb)
    return nb


def mark_self_checks(nb) -> int:
    """Put a note before the output of every practice ``check(...)`` cell: on a static
    page the check shows the stub's "not attempted", and answering needs a kernel.
    Returns how many cells were marked."""
    marked = 0
    for cell in nb.cells:
        if cell.cell_type == "code" and SELF_CHECK.search(cell.source):
            note = nbformat.v4.new_output("display_data", data={
                "text/html": SELF_CHECK_NOTE, "text/plain": SELF_CHECK_NOTE})
            cell.outputs = [note, *cell.get("outputs", [])]
            marked += 1
    return marked


def error_outputs(nb) -> list[str]:
    return [f"cell {i}: {out.get('ename')}: {out.get('evalue')}"
            for i, cell in enumerate(nb.cells) for out in cell.get("outputs", [])
            if out.get("output_type") == "error"]


_CHAPTER_LINK = re.compile(r'href="(\d\d_[A-Za-z0-9_]+)\.ipynb(#[^"]*)?"')
_LAB_LINK = re.compile(r'href="\.\./labs/([A-Za-z0-9_]+)[^"]*"')


def to_page(nb, title: str) -> str:
    """The notebook as one offline HTML page."""
    exporter = HTMLExporter(template_name="lab", mathjax_url=MATHJAX_URL)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    body = body.replace("<head>", f'<head>\n<script src="{PLOTLY_JS}"></script>\n{FIT_SVG}', 1)
    # require.js (from a CDN) only serves the widget viewer, which the site drops.
    body = body.replace(f'<script src="{exporter.require_js_url}"></script>', "")
    body = _CHAPTER_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)
    return _LAB_LINK.sub(lambda m: f'href="index.html#{m.group(1)}"', body)


def notebook_title(nb, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def index_page(entries: list[tuple[str, str]]) -> str:
    chapters = "\n".join(f'<li><a href="{html.escape(page)}">{html.escape(title)}</a></li>'
                         for page, title in entries)
    labs = "\n".join(
        f'<li id="{lab}"><code>labs/{lab}/</code> (open with <code>make lab</code>)</li>'
        for lab in LABS)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>How a deep-learning training framework works inside</title>
<style>body {{ font-family: system-ui, sans-serif; max-width: 46em; margin: 3em auto;
line-height: 1.5; padding: 0 1em; }} li {{ margin: .4em 0; }}</style></head>
<body>
<h1>How a deep-learning training framework works inside</h1>
<p>Computational graphs (计算图), automatic differentiation (自动微分), distributed training
(分布式训练) and mixed precision (混合精度), each with a small reference engine checked
against PyTorch, then joined in one training loop. These pages are the executed
notebooks, for reading without a Jupyter server: figures are interactive, sliders need a
live kernel (<code>make lab</code>).</p>
<h2>Chapters</h2>
<ol start="0">
{chapters}
</ol>
<h2>Labs</h2>
<p>Labs are worked in JupyterLab, where each exercise has a self-check.</p>
<ul>
{labs}
</ul>
</body></html>
"""


def build(notebooks: list[Path], out: Path) -> list[tuple[str, str]]:
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js_path(), out / PLOTLY_JS)
    shutil.copytree(mathjax_dir(), out / "mathjax", dirs_exist_ok=True)
    entries = []
    for path in notebooks:
        started = time.perf_counter()
        nb = execute(path)
        errors = error_outputs(nb)
        if errors:
            raise SystemExit(f"{path.name} shows errors, not publishing it:\n" + "\n".join(errors))
        title = notebook_title(nb, path.stem)
        page = f"{path.stem}.html"
        (out / page).write_text(to_page(nb, title), encoding="utf-8")
        entries.append((page, title))
        print(f"{path.name} -> {out / page} ({time.perf_counter() - started:.1f} s)")
    (out / "index.html").write_text(index_page(entries), encoding="utf-8")
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebooks to publish (default: chapters/*.ipynb)")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "site")
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or sorted((ROOT / "chapters").glob(
        "*.ipynb"))
    build(notebooks, args.out)
    print(f"site: {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
