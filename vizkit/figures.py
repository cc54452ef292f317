"""Showing a figure in a notebook, always with a text summary beside it.

Every picture in the course goes through :func:`show`, so that (1) readers who
cannot see the figure get the same facts as text, and (2) how plotly figures
are rendered is decided in exactly one place, here.

A plotly figure is displayed as one output holding two representations:

* ``application/vnd.plotly.v1+json`` — the figure as JSON. JupyterLab draws it
  with the ``jupyterlab-plotly`` renderer that ships inside the ``plotly``
  package (no notebook-wide plotly.js injection, no network).
* ``text/html`` — a ``<div>`` plus a ``Plotly.newPlot`` call that expects
  plotly.js to be loaded already. nbconvert has no plotly renderer and so
  exports this one; the static site (``tools/build_site.py``) puts
  ``plotly.min.js`` next to its pages and loads it in every page's head, so the
  exported figures draw offline.

Figures speak the course's current language (:mod:`chapters.language`): in
Chinese the summary's label is Chinese and plotly draws with a CJK font.
"""

from __future__ import annotations

import json

from IPython.display import Markdown, display

from chapters.language import language
from vizkit.strings import CJK_FONT, check_table, words

PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"

# The Chinese label keeps its full-width colon outside the emphasis: Markdown does not
# close a `*` that sits between punctuation and a CJK character.
TEXT = check_table({
    "en": {"summary": "*Figure summary:* {summary}", "untitled": "untitled"},
    "zh": {"summary": "*图示说明*：{summary}", "untitled": "无标题"},
})


def _is_plotly(figure) -> bool:
    return type(figure).__module__.startswith("plotly.") and hasattr(figure, "to_plotly_json")


def plotly_bundle(figure) -> dict:
    """The mimebundle for a plotly figure: JSON for JupyterLab, HTML for nbconvert
    (a copy drawn with :data:`~vizkit.strings.CJK_FONT` when the course speaks Chinese)."""
    import plotly.io as pio

    if language() == "zh":
        figure = type(figure)(figure).update_layout(font_family=CJK_FONT)
    spec = json.loads(pio.to_json(figure, validate=False))
    spec["config"] = {"responsive": True, "displaylogo": False}
    height = figure.layout.height or 420
    page = pio.to_html(figure, full_html=False, include_plotlyjs=False,
                       config=spec["config"], default_height=f"{height}px")
    title = figure.layout.title.text or words(TEXT)["untitled"]
    return {PLOTLY_MIMETYPE: spec, "text/html": page, "text/plain": f"<plotly figure: {title}>"}


def show(figure, summary: str) -> None:
    """Display ``figure`` (a plotly Figure, an SVG, a widget...) and then
    ``summary``, a short plain-text description of what it shows."""
    if _is_plotly(figure):
        display(plotly_bundle(figure), raw=True)
    else:
        display(figure)
    display(Markdown(words(TEXT)["summary"].format(summary=summary)))
