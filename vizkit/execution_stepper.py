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

from .graphviz_views import GraphDrawing, to_dot

RAN, NOW, LIVE = "#cfd8dc", "#ffb74d", "#a5d6a7"


def step_text(plan, step: int) -> str:
    node = plan.order[step]
    args = ", ".join(i.name for i in node.inputs)
    live = plan.live_after(step)
    nbytes = sum(n.meta.nbytes for n in plan.order if n.name in set(live)
                 and getattr(n, "meta", None) is not None)
    return (f"step {step + 1}/{len(plan.order)}: ran {node.name} = {node.op}({args}); "
            f"{len(live)} intermediate value(s) alive ({nbytes / 1024:.1f} KiB): "
            f"{', '.join(live) or 'none'}")


def step_colours(plan, step: int) -> dict[str, str]:
    colours = {n.name: RAN for n in plan.order[:step]}
    colours.update({name: LIVE for name in plan.live_after(step)})
    colours[plan.order[step].name] = NOW
    return colours


def execution_stepper(graph, plan, **dot_options) -> widgets.VBox:
    """A slider over ``plan.order``; moving it redraws ``graph`` and the text."""
    slider = widgets.IntSlider(value=0, min=0, max=len(plan.order) - 1, description="step",
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
    legend = widgets.HTML(f"<small><span style='background:{RAN}'>&nbsp;ran&nbsp;</span> "
                          f"<span style='background:{NOW}'>&nbsp;running now&nbsp;</span> "
                          f"<span style='background:{LIVE}'>&nbsp;alive in memory&nbsp;</span>"
                          "</small>")
    return widgets.VBox([slider, legend, caption, picture])
