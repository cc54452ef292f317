"""An ipywidgets slider that steps through a graph's execution order.

At step ``k`` the drawing shows which nodes have run (grey), the node running
now (orange) and the values alive in memory after it (green), and a line of
text says the same. It reads a *plan* through a small protocol: ``order`` (the
nodes in execution order, as in :mod:`vizkit.graphviz_views`) and
``live_after(step) -> names`` (the values alive once that step has run);
``chapters.graph.memory.MemoryPlan`` provides both, and so can any executor
that records what it keeps.
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from vizkit.strings import check_table, words

from .graphviz_views import GraphDrawing, to_dot

RAN, NOW, LIVE = "#cfd8dc", "#ffb74d", "#a5d6a7"

TEXT = check_table({
    "en": {"step_text": ("step {step}/{steps}: ran {name} = {op}({args}); {count} intermediate "
                         "value(s) alive ({kib:.1f} KiB): {live}"),
           "none": "none", "list": ", ", "slider": "step",
           "ran": "ran", "now": "running now", "alive": "alive in memory"},
    "zh": {"step_text": ("第 {step}/{steps} 步：执行了 {name} = {op}({args})；内存中存活 {count} 个"
                         "中间值（{kib:.1f} KiB）：{live}"),
           "none": "无", "list": "、", "slider": "执行步",
           "ran": "已执行", "now": "正在执行", "alive": "仍在内存中"},
})


def step_text(plan, step: int) -> str:
    """Step ``step`` (0-based) in words: the node that ran and the values alive after it."""
    text = words(TEXT)
    node = plan.order[step]
    args = ", ".join(i.name for i in node.inputs)
    live = plan.live_after(step)
    nbytes = sum(n.meta.nbytes for n in plan.order if n.name in set(live)
                 and getattr(n, "meta", None) is not None)
    return text["step_text"].format(step=step + 1, steps=len(plan.order), name=node.name,
                                    op=node.op, args=args, count=len(live), kib=nbytes / 1024,
                                    live=text["list"].join(live) or text["none"])


def step_colours(plan, step: int) -> dict[str, str]:
    colours = {n.name: RAN for n in plan.order[:step]}
    colours.update({name: LIVE for name in plan.live_after(step)})
    colours[plan.order[step].name] = NOW
    return colours


def execution_stepper(graph, plan, **dot_options) -> widgets.VBox:
    """A slider over ``plan.order``; moving it redraws ``graph`` and the text."""
    text = words(TEXT)
    slider = widgets.IntSlider(value=0, min=0, max=len(plan.order) - 1,
                               description=text["slider"],
                               continuous_update=False)
    picture = widgets.HTML()
    caption = widgets.HTML()

    def redraw(change=None):
        step = slider.value
        drawing = GraphDrawing(to_dot(graph, highlight=step_colours(plan, step), **dot_options))
        svg = drawing.svg
        fallback = f"<pre>{html.escape(drawing.fallback_markdown())}</pre>"
        picture.value = svg if svg is not None else fallback
        caption.value = f"<p>{html.escape(step_text(plan, step))}</p>"

    slider.observe(redraw, names="value")
    redraw()
    legend = widgets.HTML(f"<small><span style='background:{RAN}'>&nbsp;{text['ran']}&nbsp;"
                          f"</span> <span style='background:{NOW}'>&nbsp;{text['now']}&nbsp;"
                          f"</span> <span style='background:{LIVE}'>&nbsp;{text['alive']}"
                          "&nbsp;</span></small>")
    return widgets.VBox([slider, legend, caption, picture])
