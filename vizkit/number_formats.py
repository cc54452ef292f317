"""Pictures and widgets of number formats (数值格式): bit layouts, number lines,
value histograms against a format's range, and the loss-scale timeline.

Every function returns a plotly figure (or an ipywidgets box); display figures
with :func:`vizkit.figures.show` and a text summary.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from chapters.amp.formats import encode, get_format
from vizkit.strings import check_table, words

FIELD_COLOURS = {"sign": "#d62728", "exponent": "#1f77b4", "mantissa": "#2ca02c"}
DEFAULT_FORMATS = ("float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")

TEXT = check_table({
    "en": {
        "fields": {"sign": "sign", "exponent": "exponent", "mantissa": "mantissa"},
        "bit": "{format} bit {index}",
        "stored": "{stored:.8g} ({kind}, rel. err {error:.1e})",
        "layout_title": "Bit layout of {value!r} in each format",
        "subnormal": "subnormal", "normal": "normal",
        "range_hover": "max {max:.4g}, eps {eps:.3g}",
        "range_title": "Dynamic range of each format (log2 of |x|)",
        "line_title": "{count} {name} values in [{low:g}, {high:g}]", "value": "value",
        "lines": {"smallest subnormal": "smallest subnormal", "smallest normal": "smallest normal",
                  "max": "max"},
        "count": "count", "hist_title": "Magnitudes against the {name} range",
        "log2_scale": "log2 scale", "overflow": "overflow: step skipped, scale halved",
        "scale_title": "Dynamic loss scale over training", "step": "step",
        "log2_loss_scale": "log2 loss scale",
        "table_head": ("<tr><th>format</th><th>bits (sign|exponent|mantissa)</th>"
                       "<th>stored</th><th>kind</th><th>abs. error</th><th>rel. error</th></tr>"),
        "not_a_number": "<b>{text!r} is not a number</b>",
    },
    "zh": {
        "fields": {"sign": "符号位", "exponent": "指数位", "mantissa": "尾数位"},
        "bit": "{format} 第 {index} 位",
        "stored": "{stored:.8g}（{kind}，相对误差 {error:.1e}）",
        "layout_title": "{value!r} 在各数值格式中的位布局",
        "subnormal": "次正规数", "normal": "正规数",
        "range_hover": "最大值 {max:.4g}，eps {eps:.3g}",
        "range_title": "各数值格式的动态范围（|x| 取 log2）",
        "line_title": "[{low:g}, {high:g}] 内的 {count} 个 {name} 可表示值", "value": "值",
        "lines": {"smallest subnormal": "最小次正规数", "smallest normal": "最小正规数",
                  "max": "最大值"},
        "count": "计数", "hist_title": "数值大小与 {name} 的表示范围",
        "log2_scale": "log2 缩放因子", "overflow": "溢出：跳过这一步，缩放因子减半",
        "scale_title": "训练过程中的动态损失缩放", "step": "训练步",
        "log2_loss_scale": "log2 损失缩放因子",
        "table_head": ("<tr><th>格式</th><th>位（符号|指数|尾数）</th><th>存储值</th>"
                       "<th>类别</th><th>绝对误差</th><th>相对误差</th></tr>"),
        "not_a_number": "<b>{text!r} 不是一个数</b>",
    },
})


def bit_layout_figure(value: float, formats=DEFAULT_FORMATS) -> go.Figure:
    """One row per format: every bit of ``value``'s encoding as a coloured cell
    (sign red, exponent blue, mantissa green) labelled 0/1, and the stored
    value with its relative rounding error at the end of the row."""
    text = words(TEXT)
    fig = go.Figure()
    rows = [encode(value, name) for name in formats]
    for row, enc in enumerate(rows):
        fmt = get_format(enc.format)
        bits = enc.bit_string.replace("|", "")
        kinds = (["sign"] + ["exponent"] * fmt.exponent_bits
                 + ["mantissa"] * fmt.mantissa_bits)
        for kind in FIELD_COLOURS:
            xs = [i for i, k in enumerate(kinds) if k == kind]
            fig.add_trace(go.Scatter(
                x=xs, y=[row] * len(xs), mode="markers+text", text=[bits[i] for i in xs],
                marker={"symbol": "square", "size": 18, "color": FIELD_COLOURS[kind]},
                textfont={"color": "white", "size": 10}, name=text["fields"][kind],
                legendgroup=kind, showlegend=row == 0,
                hovertext=[text["bit"].format(format=enc.format, index=fmt.bits - 1 - i)
                           for i in xs]))
        fig.add_annotation(x=fmt.bits + 0.5, y=row, xanchor="left", showarrow=False,
                           text=text["stored"].format(stored=enc.stored, kind=enc.kind,
                                                      error=enc.rel_error))
    fig.update_yaxes(tickvals=list(range(len(rows))), ticktext=[r.format for r in rows],
                     autorange="reversed")
    fig.update_xaxes(visible=False, range=[-1, 52])
    fig.update_layout(title=text["layout_title"].format(value=value),
                      height=90 + 45 * len(rows), margin={"l": 110})
    return fig


def range_figure(formats=DEFAULT_FORMATS) -> go.Figure:
    """Each format's dynamic range on a log2 axis: subnormal band (lighter)
    from the smallest subnormal to the smallest normal, normal band up to max."""
    text = words(TEXT)
    fig = go.Figure()
    for name in formats:
        fmt = get_format(name)
        lo, mid, hi = (math.log2(fmt.smallest_subnormal), math.log2(fmt.smallest_normal),
                       math.log2(fmt.max))
        fig.add_trace(go.Bar(y=[name], x=[mid - lo], base=[lo], orientation="h",
                             marker_color="#aec7e8", name=text["subnormal"], legendgroup="sub",
                             showlegend=name == formats[0]))
        fig.add_trace(go.Bar(y=[name], x=[hi - mid], base=[mid], orientation="h",
                             marker_color="#1f77b4", name=text["normal"], legendgroup="normal",
                             showlegend=name == formats[0],
                             hovertext=text["range_hover"].format(max=fmt.max, eps=fmt.eps)))
    fig.update_layout(barmode="overlay", title=text["range_title"],
                      xaxis_title="log2 |x|", height=300)
    return fig


def number_line_figure(fmt, low: float, high: float, max_points: int = 4000) -> go.Figure:
    """The representable positive values of ``fmt`` in ``[low, high]`` as ticks;
    the gaps grow with magnitude (constant relative spacing ``eps``)."""
    fmt = get_format(fmt)
    values = representable_between(fmt, low, high)
    if values.size > max_points:
        raise ValueError(f"number_line_figure: {values.size} {fmt.name} values lie in "
                         f"[{low}, {high}]; narrow the interval (at most {max_points})")
    fig = go.Figure(go.Scatter(x=values, y=np.zeros_like(values), mode="markers",
                               marker={"symbol": "line-ns-open", "size": 16},
                               name=fmt.name))
    fig.update_yaxes(visible=False)
    text = words(TEXT)
    fig.update_layout(title=text["line_title"].format(count=values.size, name=fmt.name,
                                                      low=low, high=high),
                      xaxis_title=text["value"], height=220)
    return fig


def representable_between(fmt, low: float, high: float) -> np.ndarray:
    """Sorted representable values of ``fmt`` in ``[low, high]`` (0 <= low < high),
    walked with ``np.nextafter`` in float32 and rounded into the format."""
    fmt = get_format(fmt)
    if not 0 <= low < high:
        raise ValueError(f"representable_between: need 0 <= low < high, got {low}, {high}")
    if fmt.bits <= 16:
        from chapters.amp.formats import all_values

        values = all_values(fmt)
        values = np.unique(values[np.isfinite(values) & (values >= low) & (values <= high)])
        return values
    start = np.float32(low)
    out = []
    while start <= high and len(out) < 100_001:
        out.append(float(start))
        start = np.nextafter(start, np.float32(np.inf))
    return np.array(out)


def histogram_vs_range(samples: dict[str, np.ndarray], fmt="float16",
                       title: str | None = None) -> go.Figure:
    """Histogram of ``log2 |x|`` for each named sample, with the format's
    underflow (below the smallest subnormal), subnormal, and overflow limits
    drawn as vertical lines: the picture of the mixed precision paper."""
    fmt = get_format(fmt)
    fig = go.Figure()
    for name, values in samples.items():
        values = np.abs(np.asarray(values, dtype=np.float64).ravel())
        values = values[(values > 0) & np.isfinite(values)]
        fig.add_trace(go.Histogram(x=np.log2(values), name=name, opacity=0.6,
                                   xbins={"size": 0.5}))
    lines = {"smallest subnormal": fmt.smallest_subnormal,
             "smallest normal": fmt.smallest_normal, "max": fmt.max}
    text = words(TEXT)
    for label, value in lines.items():
        fig.add_vline(x=math.log2(value), line_dash="dash",
                      annotation_text=f"{fmt.name} {text['lines'][label]}",
                      annotation_textangle=-90)
    fig.update_layout(barmode="overlay", xaxis_title="log2 |value|", yaxis_title=text["count"],
                      title=title or text["hist_title"].format(name=fmt.name), height=380)
    return fig


def loss_scale_timeline(scales, overflow_steps) -> go.Figure:
    """Loss scale (log2) per step; steps skipped because of inf/NaN marked red."""
    scales = np.asarray(scales, dtype=np.float64)
    steps = np.arange(len(scales))
    overflow = np.asarray(sorted(overflow_steps), dtype=int)
    text = words(TEXT)
    fig = go.Figure(go.Scatter(x=steps, y=np.log2(scales), mode="lines", name=text["log2_scale"],
                               line_shape="hv"))
    if overflow.size:
        fig.add_trace(go.Scatter(x=overflow, y=np.log2(scales[overflow]), mode="markers",
                                 marker={"color": "red", "symbol": "x", "size": 9},
                                 name=text["overflow"]))
    fig.update_layout(title=text["scale_title"], xaxis_title=text["step"],
                      yaxis_title=text["log2_loss_scale"], height=320)
    return fig


def curves_figure(curves: dict[str, np.ndarray], title: str, yaxis_title: str,
                  log_y: bool = False) -> go.Figure:
    """Several named curves against the step number (loss curves, fractions)."""
    fig = go.Figure()
    for name, ys in curves.items():
        fig.add_trace(go.Scatter(y=np.asarray(ys, dtype=np.float64), mode="lines", name=name))
    fig.update_layout(title=title, xaxis_title=words(TEXT)["step"], yaxis_title=yaxis_title,
                      height=360)
    if log_y:
        fig.update_yaxes(type="log")
    return fig


def encoding_table_html(value: float, formats=DEFAULT_FORMATS) -> str:
    """An HTML table: each format's bits, stored value and rounding error."""
    rows = []
    for name in formats:
        enc = encode(value, name)
        rows.append(f"<tr><td>{name}</td><td><code>{enc.bit_string}</code></td>"
                    f"<td>{enc.stored:.10g}</td><td>{enc.kind}</td>"
                    f"<td>{enc.abs_error:.3g}</td><td>{enc.rel_error:.3g}</td></tr>")
    return f"<table>{words(TEXT)['table_head']}{''.join(rows)}</table>"


def format_explorer(initial: float = 0.1, formats=DEFAULT_FORMATS):
    """A widget: type a value (or drag the log10 slider) and see its encoding
    and rounding error in every format. Returns the ipywidgets box."""
    import ipywidgets as widgets

    text = widgets.Text(value=repr(initial), description=words(TEXT)["value"])
    slider = widgets.FloatSlider(value=math.log10(abs(initial)) if initial else 0.0,
                                 min=-10, max=6, step=0.05, description="log10 |x|",
                                 continuous_update=False)
    table = widgets.HTML(encoding_table_html(initial, formats))

    def render(value_text: str) -> None:
        try:
            value = float(value_text)
        except ValueError:
            table.value = words(TEXT)["not_a_number"].format(text=value_text)
            return
        table.value = encoding_table_html(value, formats)

    def from_slider(change) -> None:
        text.value = f"{10 ** change['new']:.6g}"

    text.observe(lambda change: render(change["new"]), names="value")
    slider.observe(from_slider, names="value")
    return widgets.VBox([widgets.HBox([text, slider]), table])


__all__ = ["bit_layout_figure", "range_figure", "number_line_figure",
           "representable_between", "histogram_vs_range", "loss_scale_timeline",
           "curves_figure", "encoding_table_html", "format_explorer"]
