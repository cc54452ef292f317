"""The course autograder: release, self-check, sandboxed grading, gradebook, Gradescope.

In a lab notebook: ``from autograder import check, check_all``. Instructors:
``python -m autograder --help`` and ``autograder/GUIDE.md``.
"""

from chapters.language import set_language

from .check import check, check_all, run_check, run_check_all

__all__ = ["check", "check_all", "run_check", "run_check_all", "set_language"]
