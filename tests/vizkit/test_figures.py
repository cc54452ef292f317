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
