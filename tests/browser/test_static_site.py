"""`make site` (tools/build_site.py) publishes executed notebooks as HTML that
works offline: plotly.js and MathJax ship next to the pages, no page loads a
script from the network, and in Chromium with every non-file request blocked
the plotly figure is drawn and the formula typeset."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.notebooks.harness import ROOT

from .conftest import offline_context
from .jupyterlab_server import project_python

NOTEBOOK = ROOT / "chapters" / "00_start_here.ipynb"


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


def test_pages_load_no_script_from_the_network(site):
    page = (site / "00_start_here.html").read_text()
    assert page.index('<script src="plotly.min.js"></script>') < page.index("Plotly.newPlot(")
    remote = [src for src in re.findall(r'<script[^>]*\bsrc="([^"]+)"', page)
              if src.startswith(("http:", "https:", "//"))]
    assert remote == []
    assert (site / "mathjax" / "MathJax.js").is_file()
    assert "cdn.plot.ly" not in page


def test_chapter_links_point_to_pages(site):
    page = (site / "00_start_here.html").read_text()
    assert 'href="01_computational_graphs.html"' in page
    assert 'href="01_computational_graphs.ipynb"' not in page
    assert 'href="../labs/' not in page


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


def _build_site_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_site", ROOT / "tools" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
