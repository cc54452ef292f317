"""Every chapter notebook, opened in a real JupyterLab in headless Chromium and
run with Run > Run All Cells, shows no error and really draws its pictures:
a Graphviz SVG and a plotly plot rendered in the page (not JSON text), and a
slider whose movement changes what its cell shows; where the chapter asks for
predictions, the first one hides its answer until a guess is checked."""

from __future__ import annotations

import pytest

from tests.notebooks.harness import ROOT

from . import lab_page as lab

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

pytestmark = pytest.mark.browser


def test_there_are_chapter_notebooks():
    assert CHAPTERS, "no notebooks in chapters/"


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[p.name for p in CHAPTERS])
def test_notebook_runs_and_renders_in_jupyterlab(notebook, lab_page, jupyterlab, tmp_path):
    stored = notebook.read_bytes()
    page = lab_page
    state = lab.run_to_the_end(page, jupyterlab.url(notebook.relative_to(ROOT).as_posix()),
                               tmp_path / f"{notebook.stem}-end.png", timeout_ms=180_000)
    assert not state["errors"], f"{notebook.name}: error outputs {state['errors']}"
    assert state["executed"] == state["code"], state
    if "with prediction(why=" in notebook.read_text(encoding="utf-8"):
        guessed = lab.answer_a_prediction(page)
        assert guessed["hidden_before"] and guessed["shown_after"] and guessed["verdict"], guessed
        page.screenshot(path=tmp_path / f"{notebook.stem}-prediction.png")
    if not notebook.name[:2].isdigit():   # an appendix: its own figures, not the three kinds
        assert notebook.read_bytes() == stored, f"{notebook.name} was modified on disk"
        return

    assert lab.rendered_graphviz_svgs(page) >= 1, "no Graphviz SVG drawn in the page"
    plots = page.locator(f"{lab.OUTPUT} .js-plotly-plot")
    page.wait_for_function(f"() => ({lab._PLOTLY_PLOTS}) () > 0", timeout=20_000)
    assert lab.rendered_plotly_plots(page) >= 1
    plots.first.scroll_into_view_if_needed()
    page.screenshot(path=tmp_path / f"{notebook.stem}.png")

    before, after = lab.move_a_slider(page)
    assert before != after, f"{notebook.name}: moving the slider did not change its output"
    page.screenshot(path=tmp_path / f"{notebook.stem}-slider.png")
    assert notebook.read_bytes() == stored, f"{notebook.name} was modified on disk by the test"
