"""The course autograder: release, self-check, sandboxed grading, gradebook, Gradescope."""
