"""Tests that need a system program (Graphviz's ``dot``, Chromium) skip where it
is missing, so ``make test`` works on a laptop without them. CI sets
``COURSE_REQUIRE_DOT=1``, ``COURSE_REQUIRE_BROWSER=1`` and
``COURSE_REQUIRE_CC=1``: there a missing program is a failure, so a green CI
run proves those tests really ran."""

from __future__ import annotations

import os

import pytest


def missing(reason: str, required_by: str) -> None:
    """Skip the calling test, or fail it when ``$required_by`` is ``1``."""
    if os.environ.get(required_by) == "1":
        pytest.fail(f"{reason} ({required_by}=1 makes this a failure)")
    pytest.skip(reason)


def require_dot() -> None:
    """Skip (or, under COURSE_REQUIRE_DOT=1, fail) when Graphviz's ``dot`` is absent."""
    from vizkit.graphviz_views import dot_program

    if dot_program() is None:
        missing("Graphviz's `dot` is not installed (sudo apt-get install graphviz)",
                "COURSE_REQUIRE_DOT")


def require_cc() -> None:
    """Skip (or, under COURSE_REQUIRE_CC=1, fail) when no C compiler is found
    for chapter 1's C kernels."""
    from chapters.graph.ckernel import c_compiler

    if c_compiler() is None:
        missing("no C compiler is installed for the C kernels (sudo apt-get install gcc "
                "libc6-dev, or conda install -c conda-forge c-compiler)", "COURSE_REQUIRE_CC")
