"""show_source renders the engines' real source: the text equals
inspect.getsource, ranges and highlights use absolute line numbers, and
mistakes get errors that say what is valid."""

import inspect
import re

import pytest

import chapters.graph.ir as ir_module
from chapters.autodiff import Tensor
from chapters.graph import Graph, topological_sort
from vizkit import show_source
from vizkit.source_view import listing_html, listing_text, source_listing

NUMBERED = re.compile(r"^[ >] *(\d+) \| ?(.*)$")


def parse_text(text: str) -> tuple[str, list[int], list[str], set[int]]:
    """Split a plain-text listing into header, line numbers, code lines and marked lines."""
    header, *rows = text.splitlines()
    matches = [NUMBERED.match(row) for row in rows]
    assert all(matches), text
    numbers = [int(m.group(1)) for m in matches]
    marked = {int(m.group(1)) for m in matches if m.group(0).startswith(">")}
    return header, numbers, [m.group(2) for m in matches], marked


@pytest.mark.parametrize("obj", [topological_sort, Graph.topological_order, Graph, Tensor.backward],
                         ids=["function", "method", "class", "engine method"])
def test_listing_is_exactly_the_inspected_source(obj):
    listing = source_listing(obj)
    lines, start = inspect.getsourcelines(obj)
    assert listing.source == inspect.getsource(obj)
    assert (listing.first, listing.last) == (start, start + len(lines) - 1)


def test_text_shows_every_source_line_with_its_file_line_number():
    header, numbers, code, marked = parse_text(repr(show_source(topological_sort)))
    lines, start = inspect.getsourcelines(topological_sort)
    assert header == f"topological_sort — chapters/graph/ir.py:{start}-{start + len(lines) - 1}"
    assert numbers == list(range(start, start + len(lines)))
    assert code == [line.rstrip() for line in lines]
    assert not marked


def test_range_and_highlight_use_absolute_line_numbers():
    start = inspect.getsourcelines(topological_sort)[1]
    listing = source_listing(topological_sort, lines=(start + 2, start + 5),
                             highlight=[start + 3, start + 5])
    with open(inspect.getsourcefile(topological_sort), encoding="utf-8") as f:
        expected = f.readlines()[start + 1:start + 5]
    assert listing.lines == tuple(expected)
    _, numbers, _, marked = parse_text(listing_text(listing))
    assert numbers == [start + 2, start + 3, start + 4, start + 5]
    assert marked == {start + 3, start + 5}


def test_a_single_line_can_be_highlighted():
    start = inspect.getsourcelines(topological_sort)[1]
    assert source_listing(topological_sort, highlight=start).highlight == {start}


def test_a_module_range_counts_from_line_one():
    listing = source_listing(ir_module, lines=(1, 2))
    with open(ir_module.__file__, encoding="utf-8") as f:
        assert listing.lines == tuple(f.readlines()[:2])


def test_a_property_shows_its_getter():
    class Box:
        @property
        def size(self):
            return 1

    assert source_listing(Box.size).source == inspect.getsource(Box.size.fget)


def test_html_is_highlighted_self_contained_and_numbered():
    start = inspect.getsourcelines(topological_sort)[1]
    view = show_source(topological_sort, highlight=start + 1)
    html = view._repr_html_()
    assert "chapters/graph/ir.py" in html and "topological_sort" in html
    assert "<style" not in html and "class=\"s" not in html   # colours inline, no stylesheet
    assert 'style="color:' in html
    assert f"> {start}<" in html or f">{start}<" in html
    assert html.count("background-color: #ffffcc") == 1


def test_html_escapes_source_text():
    html = listing_html(source_listing(topological_sort))
    assert "-&gt;" in html and "->" not in html


def test_pretty_printing_gives_the_plain_text():
    from IPython.lib.pretty import pretty

    view = show_source(topological_sort)
    assert pretty(view) == repr(view)


@pytest.mark.parametrize("obj", [len, print, dict.get])
def test_builtins_have_no_source(obj):
    with pytest.raises(TypeError, match="has no Python source .* built in or defined in C.*"
                                        "function, method or class"):
        show_source(obj)


def test_an_instance_is_refused_with_what_to_pass_instead():
    with pytest.raises(TypeError, match="object of type Graph, not a function.*type\\(obj\\)"):
        show_source(Graph("g"))


def test_source_that_is_not_in_a_file_is_refused():
    made = eval("lambda: 0")
    with pytest.raises(TypeError, match="cannot be read"):
        show_source(made)


@pytest.mark.parametrize("lines", [(1, 5), (10_000, 10_001), "all"])
def test_bad_range_names_the_valid_one(lines):
    lines_, start = inspect.getsourcelines(topological_sort)
    last = start + len(lines_) - 1
    with pytest.raises(ValueError, match=f"spans lines {start}-{last} of chapters/graph/ir.py"):
        show_source(topological_sort, lines=lines)


def test_reversed_range_is_refused():
    start = inspect.getsourcelines(topological_sort)[1]
    with pytest.raises(ValueError, match=f"{start} <= first <= last"):
        show_source(topological_sort, lines=(start + 3, start + 1))


def test_highlight_outside_the_listing_is_refused():
    start = inspect.getsourcelines(topological_sort)[1]
    with pytest.raises(ValueError, match=r"names \[1\], not lines of the listing"):
        show_source(topological_sort, lines=(start, start + 2), highlight=[start, 1])
