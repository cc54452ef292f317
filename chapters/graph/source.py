"""Where in the user's code a node was created (源码位置).

A traced graph runs far from the code that built it: when a kernel fails
inside the interpreter, Python's traceback shows the interpreter's loop, not
the line of the user's function. So the tracer notes, for every node it
records, the first stack frame outside this package — file, line number and
the line's text — as ``torch.fx`` keeps ``node.meta["stack_trace"]``. The
cost is paid once per node at trace time; running the graph reads it only
when something fails.
"""

from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class SourceLocation:
    """One line of user code: ``file:line`` and the code written there."""

    file: str
    line: int
    code: str

    def __str__(self) -> str:
        return f'File "{self.file}", line {self.line}\n    {self.code}'


def user_location() -> SourceLocation | None:
    """The innermost caller frame whose code is not in ``chapters/graph``."""
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if not os.path.abspath(path).startswith(PACKAGE_DIR + os.sep):
            line = frame.f_lineno
            return SourceLocation(path, line, linecache.getline(path, line).strip())
        frame = frame.f_back
    return None
