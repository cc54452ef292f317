"""vizkit.figures: one plotly output carries the JSON JupyterLab draws and the
HTML the static site draws, without bundling plotly.js into every output."""

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from vizkit.figures import PLOTLY_MIMETYPE, plotly_bundle


def test_plotly_bundle_has_json_for_jupyterlab_and_html_for_the_site():
    fig = go.Figure(go.Scatter(x=np.arange(3), y=[1.0, 4.0, 9.0]))
    fig.update_layout(title="squares", height=300)
    bundle = plotly_bundle(fig)
    spec = bundle[PLOTLY_MIMETYPE]
    assert list(pio.from_json(pio.to_json(spec)).data[0].y) == [1.0, 4.0, 9.0]
    page = bundle["text/html"]
    assert "Plotly.newPlot(" in page and "height:300px" in page
    assert len(page) < 20_000, "plotly.js must not be embedded in each output"
    assert "cdn.plot.ly" not in page
    assert bundle["text/plain"] == "<plotly figure: squares>"


def test_chinese_figures_get_a_cjk_font_and_a_chinese_summary_label(chinese, monkeypatch):
    import vizkit.figures as figures

    fig = go.Figure(go.Scatter(x=[0, 1], y=[2.0, 3.0]))
    spec = plotly_bundle(fig)[PLOTLY_MIMETYPE]
    assert "Noto Sans CJK SC" in spec["layout"]["font"]["family"]
    assert fig.layout.font.family is None, "the caller's figure is left as it was"
    shown = []
    monkeypatch.setattr(figures, "display", lambda obj, **kw: shown.append(obj))
    figures.show(fig, "共 3 个节点")
    assert shown[-1].data == "*图示说明*：共 3 个节点"


def test_english_figures_keep_plotly_fonts_and_the_english_label(monkeypatch):
    import vizkit.figures as figures

    fig = go.Figure(go.Scatter(x=[0, 1], y=[2.0, 3.0]))
    assert "font" not in plotly_bundle(fig)[PLOTLY_MIMETYPE]["layout"]
    shown = []
    monkeypatch.setattr(figures, "display", lambda obj, **kw: shown.append(obj))
    figures.show(fig, "3 nodes")
    assert shown[-1].data == "*Figure summary:* 3 nodes"
