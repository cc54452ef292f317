"""Showing a figure in a notebook, always with a text summary beside it.

Every picture in the course goes through :func:`show`, so that (1) readers who
cannot see the figure get the same facts as text, and (2) how plotly figures
are rendered (JupyterLab's plotly mimetype, plus offline HTML for the static
site) is decided in exactly one place.
"""

from __future__ import annotations

from IPython.display import Markdown, display


def show(figure, summary: str) -> None:
    """Display ``figure`` (a plotly Figure, an SVG, a widget...) and then
    ``summary``, a short plain-text description of what it shows."""
    display(figure)
    display(Markdown(f"*Figure summary:* {summary}"))
