"""Every Graphviz drawing names one font list, and with it a Chinese label is drawn
in a Simplified Chinese font: in the SVG (the browser reads the list as
``font-family``) and in ``dot``'s own rendering (a PNG, through Pango), where
the label is not blank and its glyphs are the Chinese font's, not a fallback
picked by fontconfig."""

from __future__ import annotations

import re
import shutil
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest

import chapters.autodiff as ad
from tests.system_deps import missing, require_dot
from vizkit import graphviz_views as gv
from vizkit.amp_figures import scaler_loop_diagram
from vizkit.autograd_views import backward_graph
from vizkit.comm_views import ring_drawing

CHINESE_FONT = "Noto Sans CJK SC"
LABEL = "计算图 反向传播"
FONTNAME = re.compile(r'fontname=("[^"]*"|[^\s,\]]+)')


def _history():
    x = ad.Tensor(np.ones(3), requires_grad=True)
    return (x * 2.0).sum()


DRAWINGS = {
    "to_dot": lambda: gv.to_dot(trace_like(), title="图"),
    "backward_graph": lambda: backward_graph(_history(), title="图").dot,
    "ring_drawing": lambda: ring_drawing(4, 1).dot,
    "scaler_loop_diagram": lambda: scaler_loop_diagram().source,
}


def trace_like():
    """The smallest graph the drawing protocol accepts: an input and an op on it."""
    x = SimpleNamespace(name="输入", op="placeholder", inputs=())
    return [SimpleNamespace(name="计算图", op="tanh", inputs=(x,))]


@pytest.mark.parametrize("name", DRAWINGS)
def test_every_drawing_names_the_one_font_list(name):
    names = FONTNAME.findall(DRAWINGS[name]())
    assert names and {n.strip('"') for n in names} == {gv.FONT}, names


def test_the_font_list_covers_latin_then_simplified_chinese():
    families = gv.FONT.split(",")
    assert families[0] == "Helvetica" and families[-1] == "sans-serif"
    assert families.index("Liberation Sans") < families.index(CHINESE_FONT)


def test_the_svg_keeps_the_chinese_label_and_the_font_list():
    require_dot()
    svg = gv.render_svg(gv.to_dot(trace_like()))
    texts = re.findall(r'<text[^>]*font-family="([^"]*)"[^>]*>([^<]*)</text>', svg)
    assert (gv.FONT, "计算图") in texts and (gv.FONT, "输入") in texts, texts


def _has_chinese_font() -> bool:
    """Whether fontconfig has the Simplified Chinese font, with the label's glyphs."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return False
    charset = " ".join(f"{ord(c):x}" for c in set(LABEL) if c != " ")
    found = subprocess.run([fc_list, f":charset={charset}", "family"], capture_output=True,
                           text=True, timeout=30).stdout
    return CHINESE_FONT in found


def _png(fontname: str, label: str) -> bytes:
    """``dot``'s PNG of one fixed-size node: the same canvas whatever the label."""
    dot = (f'digraph {{ node [shape=box fixedsize=true width=2.5 height=0.6 '
           f'fontname="{fontname}"]; a [label="{label}"]; }}')
    return subprocess.run([gv.dot_program(), "-Tpng"], input=dot.encode(), check=True,
                          capture_output=True, timeout=30).stdout


def test_a_chinese_label_is_drawn_in_the_chinese_font_not_blank_not_a_fallback():
    require_dot()
    if not _has_chinese_font():
        missing(f"fontconfig has no {CHINESE_FONT} (sudo apt-get install fonts-noto-cjk)",
                "COURSE_REQUIRE_DOT")
    drawn = _png(gv.FONT, LABEL)
    assert drawn != _png(gv.FONT, ""), "the label left the node blank"
    # the same pixels as the Chinese font itself draws: its glyphs, which it has (above),
    # so no box for a missing glyph and no other font's letterforms
    assert drawn == _png(CHINESE_FONT, LABEL)
