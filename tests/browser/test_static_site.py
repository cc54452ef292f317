"""`make site` (tools/build_site.py) publishes executed notebooks as HTML that
works offline: plotly.js and MathJax ship next to the pages, no page loads a
script from the network, and in Chromium with every non-file request blocked
the plotly figure is drawn and the formula typeset.

Each chapter is published in English at the site's top and in Chinese under
``zh/``; every page has a language switch to the same page in the other
edition, and the Chinese pages say ``lang="zh-CN"``, link to each other and
carry Chinese notes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.notebooks.harness import ROOT

from .conftest import offline_context
from .jupyterlab_server import project_python

NOTEBOOK = ROOT / "chapters" / "00_start_here.ipynb"
CHINESE_NOTEBOOK = ROOT / "chapters" / "zh" / "00_start_here.ipynb"
PAGE = "00_start_here.html"
# (English page, its Chinese edition), relative to the site
EDITIONS = [(PAGE, f"zh/{PAGE}"), ("index.html", "zh/index.html")]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([project_python(ROOT), str(ROOT / "tools" / "build_site.py"),
                           "--out", str(out), str(NOTEBOOK)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def test_site_has_index_page_and_plotly_js(site):
    import plotly

    index = (site / "index.html").read_text()
    assert 'href="00_start_here.html"' in index
    shipped = (site / "plotly.min.js").read_bytes()
    bundled = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_bytes()
    assert shipped == bundled and b"plotly.js v" in shipped[:200]
    # shipped once: the Chinese pages use the copies at the top
    assert not (site / "zh" / "plotly.min.js").exists() and not (site / "zh" / "mathjax").exists()


@pytest.mark.parametrize("name", [PAGE, f"zh/{PAGE}"])
def test_pages_load_no_script_from_the_network(site, name):
    page = (site / name).read_text()
    assert page.index('plotly.min.js"></script>') < page.index("Plotly.newPlot(")
    sources = re.findall(r'<script[^>]*\bsrc="([^"]+)"', page)
    remote = [src for src in sources if src.startswith(("http:", "https:", "//"))]
    assert remote == []
    local = {src.split("?")[0] for src in sources}
    assert {Path(src).name for src in local} == {"plotly.min.js", "MathJax.js"}
    missing = [src for src in local if not ((site / name).parent / src).resolve().is_file()]
    assert missing == [], f"{name} loads scripts the site does not ship: {missing}"
    assert "cdn.plot.ly" not in page


def test_chapter_links_point_to_pages(site):
    page = (site / "00_start_here.html").read_text()
    assert 'href="01_computational_graphs.html"' in page
    assert 'href="01_computational_graphs.ipynb"' not in page
    assert 'href="../labs/' not in page


def _build_site_module():
    """tools/build_site.py, imported once (its dataclasses need it in sys.modules)."""
    import importlib.util
    import sys

    if "build_site" not in sys.modules:
        spec = importlib.util.spec_from_file_location("build_site",
                                                      ROOT / "tools" / "build_site.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["build_site"] = module
        spec.loader.exec_module(module)
    return sys.modules["build_site"]


def _hrefs(html_text: str) -> list[str]:
    return [href for href in re.findall(r'href="([^"]+)"', html_text)
            if not href.startswith(("#", "http:", "https:"))]


def test_chinese_chapter_links_point_to_chinese_pages(site):
    page = (site / "zh" / PAGE).read_text().split("</nav>", 1)[1]  # after the switch
    chapters = [href for href in _hrefs(page) if re.match(r"(\.\./)?\d\d_", href)]
    assert "01_computational_graphs.html" in chapters
    for href in chapters:
        target = (site / "zh" / href.split("#")[0]).resolve()
        assert target.parent == (site / "zh").resolve(), f"{href} leaves the Chinese pages"
        assert (CHINESE_NOTEBOOK.parent / f"{target.stem}.ipynb").is_file(), href
    assert ".ipynb" not in "".join(_hrefs(page)) and "labs/" not in "".join(_hrefs(page))
    labs = [href for href in _hrefs(page) if href.startswith("index.html#")]
    index = (site / "zh" / "index.html").read_text()
    assert all(f'id="{href.split("#")[1]}"' in index for href in labs)
    # the Chinese page sends a learner to each lab through its Chinese release
    assert all(f"release {lab} --lang zh" in page
               for lab in ("lab1_graph", "lab2_autodiff", "lab3_distributed", "lab4_amp"))


def _switch(html_text: str) -> list[str]:
    """The links of the page's language switch, which must come before any content."""
    nav = re.search(r'<nav class="language-switch">(.*?)</nav>', html_text, re.DOTALL)
    assert nav, "the page has no language switch"
    body = re.search(r"<body[^>]*>", html_text)
    assert body.end() <= nav.start() < html_text.index("<h1", body.end())
    return re.findall(r'href="([^"]+)"', nav.group(1))


@pytest.mark.parametrize("english,chinese", EDITIONS)
def test_language_switch_links_both_ways(site, english, chinese):
    [to_chinese] = _switch((site / english).read_text())
    [to_english] = _switch((site / chinese).read_text())
    assert ((site / english).parent / to_chinese).resolve() == (site / chinese).resolve()
    assert ((site / chinese).parent / to_english).resolve() == (site / english).resolve()


@pytest.mark.parametrize("english,chinese", EDITIONS)
def test_chinese_pages_say_they_are_chinese(site, english, chinese):
    assert re.search(r"<html[^>]*>", (site / english).read_text()).group() == '<html lang="en">'
    assert re.search(r"<html[^>]*>", (site / chinese).read_text()).group() == \
        '<html lang="zh-CN">'


def test_chinese_index_lists_the_chinese_chapters(site):
    import nbformat

    heading = next(line[2:].strip() for cell in nbformat.read(CHINESE_NOTEBOOK, 4).cells
                   if cell.cell_type == "markdown" for line in cell.source.splitlines()
                   if line.startswith("# "))
    index = (site / "zh" / "index.html").read_text()
    assert f'<a href="{PAGE}">{heading}</a>' in index
    assert re.search(r"[\u4e00-\u9fff]", heading)
    assert "labs/lab1_graph/source.zh.ipynb" in index
    assert "release lab1_graph --lang zh" in index


def test_chinese_pages_carry_chinese_notes(site):
    build_site = _build_site_module()
    english, chinese = (site / PAGE).read_text(), (site / "zh" / PAGE).read_text()
    assert build_site.ENGLISH.widget_note in english  # chapter 0 has a slider
    assert build_site.CHINESE.widget_note in chinese
    assert build_site.ENGLISH.widget_note not in chinese


def test_a_chinese_notebook_on_the_command_line_is_refused_with_the_english_one_named(capsys):
    build_site = _build_site_module()
    with pytest.raises(SystemExit) as refused:
        build_site.main(["--out", "/nonexistent", str(CHINESE_NOTEBOOK)])
    assert refused.value.code == 2
    assert "name the English notebook (chapters/00_start_here.ipynb)" in capsys.readouterr().err


@pytest.mark.browser
def test_plotly_figure_draws_offline(site, chromium, tmp_path):
    context, blocked = offline_context(chromium, lambda url: url.startswith("file://"))
    page = context.new_page()
    page.goto((site / "00_start_here.html").as_uri())
    page.wait_for_function(
        "() => document.querySelectorAll('.js-plotly-plot .main-svg .trace').length > 0",
        timeout=30_000)
    assert page.locator(".jp-OutputArea-output svg g.graph").count() >= 1 or \
        page.locator(".jp-OutputArea-output img[src^='data:image/svg']").count() >= 1
    page.wait_for_function("() => document.querySelectorAll('.MathJax, .MathJax_CHTML, "
                           ".MathJax_SVG, mjx-container').length > 0", timeout=30_000)
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
    page.screenshot(path=tmp_path / "site-00_start_here.png")
    context.close()
    assert blocked == []


@pytest.mark.browser
def test_chinese_page_switches_to_english_and_back_offline(site, chromium):
    context, blocked = offline_context(chromium, lambda url: url.startswith("file://"))
    page = context.new_page()
    page.goto((site / "zh" / PAGE).as_uri())
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    page.locator(".language-switch a").click()
    page.wait_for_url((site / PAGE).as_uri())
    assert page.evaluate("document.documentElement.lang") == "en"
    page.locator(".language-switch a").click()
    page.wait_for_url((site / "zh" / PAGE).as_uri())
    assert page.locator(".language-switch a").inner_text() == "English"
    context.close()
    assert blocked == []




def test_self_check_cells_get_a_note_that_they_need_a_kernel():
    import nbformat

    build_site = _build_site_module()
    stub_output = nbformat.v4.new_output("display_data", data={"text/plain": "not attempted"})
    checked = nbformat.v4.new_code_cell('check("ch1_example")', outputs=[stub_output])
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("def f():\n    raise NotImplementedError"),
        checked,
        nbformat.v4.new_code_cell("checked = 1  # check(...) in a comment is not a self-check"),
        nbformat.v4.new_markdown_cell('check("ch1_example")')])
    assert build_site.mark_self_checks(nb) == 1
    note, original = checked.outputs
    assert "live kernel" in note["data"]["text/html"] and original is stub_output
    assert [len(c.get("outputs", [])) for c in nb.cells if c is not checked] == [0, 0, 0]
    assert build_site.mark_self_checks(nb, build_site.CHINESE.self_check_note) == 1
    assert "运行中的内核" in checked.outputs[0]["data"]["text/html"]


def test_a_prediction_shows_its_guess_box_without_its_source():
    import nbformat

    build_site = _build_site_module()
    box = nbformat.v4.new_output("display_data", data={
        "text/html": "<div class='vizkit-prediction'>guess box</div>", "text/plain": "[box]"})
    hidden = nbformat.v4.new_code_cell('with prediction(why="SECRET WHY") as answer:\n'
                                       '    assert 6 == 6', outputs=[box])
    hidden.metadata.update(jupyter={"source_hidden": True}, tags=["hide-input"])
    shown = nbformat.v4.new_code_cell("visible_code = 1")
    page = build_site.to_page(nbformat.v4.new_notebook(cells=[hidden, shown]), "t")
    assert "guess box" in page and "visible_code" in page
    assert "SECRET WHY" not in page and "assert 6 == 6" not in page


@pytest.mark.browser
def test_a_prime_and_other_formulas_typeset_with_the_shipped_fonts(site, chromium):
    """The shipped MathJax holds only STIX-Web fonts: a page must not ask for the TeX
    fonts, or a prime (f'(x)) shows as "[Math Processing Error]"."""
    import nbformat

    build_site = _build_site_module()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "The exact $f'(0.7)$, a step $h = 10^{-5}$ and $\\dfrac{dy}{dx} = 2x + 3$.")])
    page_path = site / "formulas.html"
    page_path.write_text(build_site.to_page(nb, "formulas"), encoding="utf-8")
    context, _ = offline_context(chromium, lambda url: url.startswith("file://"))
    page = context.new_page()
    page.goto(page_path.as_uri())
    page.wait_for_function("() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
                           " && document.querySelectorAll('.MathJax').length >= 3", timeout=30_000)
    errors = page.locator(".MathJax_Error").count()
    context.close()
    assert errors == 0
