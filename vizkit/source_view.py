"""Show the engines' own source (源代码) in a notebook, with its file and line numbers.

Chapters never copy engine code into a cell to show it: ``show_source(trace)``
reads the real function, so the text on screen and the engine cannot drift.
In JupyterLab the listing is syntax-highlighted HTML with inline styles (it
needs no stylesheet or network, so the static site shows it too); text
outputs get the same listing as numbered plain text.

:func:`source_listing` finds the lines; :func:`listing_text` and
:func:`listing_html` are pure functions of the listing, tested without any UI.
"""

from __future__ import annotations

import html
import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

PROJECT_ROOT = Path(__file__).resolve().parents[1]
HTML_STYLE = "default"


@dataclass(frozen=True)
class SourceListing:
    """A run of source lines of one object.

    ``first`` is the absolute file line number of ``lines[0]``; ``highlight``
    holds absolute line numbers, all inside the listing."""

    name: str
    path: str
    first: int
    lines: tuple[str, ...]
    highlight: frozenset[int] = frozenset()

    @property
    def last(self) -> int:
        """Absolute line number of the listing's last line."""
        return self.first + len(self.lines) - 1

    @property
    def source(self) -> str:
        """The listed lines exactly as they stand in the file."""
        return "".join(self.lines)

    @property
    def header(self) -> str:
        """``name — path:first-last``, the line above the listing."""
        return f"{self.name} — {self.path}:{self.first}-{self.last}"


def has_no_source_error(obj, error: Exception) -> TypeError:
    """The error for an object ``inspect`` found no Python source for
    (``error`` is what ``inspect`` raised)."""
    if isinstance(error, OSError):
        return TypeError(
            f"show_source: the source of {obj!r} cannot be read ({error}); it was defined "
            "where no file keeps it. Pass a function, method or class of the course's engines")
    if inspect.isroutine(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
        return TypeError(
            f"show_source: {obj!r} has no Python source (it is built in or defined in C); "
            "pass a function, method or class of the course's engines")
    return TypeError(
        f"show_source: {obj!r} is an object of type {type(obj).__name__}, not a function, "
        "method or class, so it has no source of its own; pass its class (type(obj)) or the "
        "function that made it")


def display_path(filename: str) -> str:
    """``filename`` relative to the project root, or as it is when it lies outside."""
    path = Path(filename).resolve()
    return path.relative_to(PROJECT_ROOT).as_posix() if path.is_relative_to(PROJECT_ROOT) \
        else str(path)


def object_name(obj) -> str:
    """The qualified name a reader knows ``obj`` by (``Graph.topological_order``)."""
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))


def check_range(name: str, path: str, span: tuple[int, int], lines) -> tuple[int, int]:
    """Validate ``lines=(first, last)`` against ``span``, the object's own lines."""
    valid = f"{name}'s source spans lines {span[0]}-{span[1]} of {path}"
    if (not isinstance(lines, tuple | list) or len(lines) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in lines)):
        raise ValueError(f"show_source: lines={lines!r} must be a pair (first, last) of "
                         f"absolute line numbers; {valid}")
    first, last = lines
    if not span[0] <= first <= last <= span[1]:
        raise ValueError(f"show_source: lines=({first}, {last}) is not a range inside "
                         f"{name}; {valid}, so pass {span[0]} <= first <= last <= {span[1]}")
    return first, last


def check_highlight(listing: SourceListing, highlight) -> frozenset[int]:
    """Validate ``highlight=``: one line number or an iterable of them, all shown."""
    numbers = [highlight] if isinstance(highlight, int) else list(highlight)
    outside = [n for n in numbers if not isinstance(n, int) or isinstance(n, bool)
               or not listing.first <= n <= listing.last]
    if outside:
        raise ValueError(f"show_source: highlight={highlight!r} names {outside}, not lines of "
                         f"the listing; {listing.header} shows lines "
                         f"{listing.first}-{listing.last} (absolute file line numbers)")
    return frozenset(numbers)


def source_listing(obj, lines=None, highlight: int | Iterable[int] | None = None
                   ) -> SourceListing:
    """The source of ``obj`` (a function, method, class or module), optionally
    only ``lines=(first, last)`` and with ``highlight`` lines marked; all line
    numbers are absolute line numbers of the file. A property shows its getter."""
    if isinstance(obj, property):
        obj = obj.fget
    try:
        source_lines, start = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or inspect.getfile(obj)
    except (TypeError, OSError) as error:
        raise has_no_source_error(obj, error) from error
    first = max(start, 1)  # a module's source starts at line 0
    name, path = object_name(obj), display_path(filename)
    if lines is not None:
        span = (first, first + len(source_lines) - 1)
        lo, hi = check_range(name, path, span, lines)
        source_lines, first = source_lines[lo - first:hi - first + 1], lo
    listing = SourceListing(name, path, first, tuple(source_lines))
    if highlight is None:
        return listing
    return SourceListing(name, path, first, listing.lines, check_highlight(listing, highlight))


def listing_text(listing: SourceListing) -> str:
    """The listing as plain text: the header, then ``> 12 | code`` per line,
    ``>`` marking highlighted lines."""
    width = len(str(listing.last))
    rows = [listing.header]
    for number, line in enumerate(listing.lines, listing.first):
        mark = ">" if number in listing.highlight else " "
        rows.append(f"{mark}{number:>{width}} | {line.rstrip(chr(10))}".rstrip())
    return "\n".join(rows)


def listing_html(listing: SourceListing) -> str:
    """The listing as self-contained HTML: pygments colours as inline styles,
    absolute line numbers, highlighted lines on a yellow background."""
    formatter = HtmlFormatter(
        style=HTML_STYLE, noclasses=True, linenos="inline", linenostart=listing.first,
        hl_lines=sorted(n - listing.first + 1 for n in listing.highlight), nobackground=True)
    code = pygments_highlight(listing.source, PythonLexer(), formatter)
    header = (f'<div style="font-family: monospace; font-size: 0.85em; color: #555; '
              f'margin-bottom: 2px">{html.escape(listing.header)}</div>')
    return f'<div class="vizkit-source">{header}{code}</div>'


class SourceView:
    """What :func:`show_source` returns: HTML in JupyterLab, numbered text elsewhere."""

    def __init__(self, listing: SourceListing):
        self.listing = listing

    def _repr_html_(self) -> str:
        return listing_html(self.listing)

    def __repr__(self) -> str:
        return listing_text(self.listing)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(listing_text(self.listing))


def show_source(obj, lines=None, highlight: int | Iterable[int] | None = None) -> SourceView:
    """Show the engine's own source of ``obj`` (a function, method or class)
    with its file path, relative to the project root, and its line numbers.

    ``lines=(first, last)`` shows only that range and ``highlight`` marks one
    line number or several; both use the file's absolute line numbers."""
    return SourceView(source_listing(obj, lines=lines, highlight=highlight))
