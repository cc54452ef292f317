"""The course: one notebook per chapter, each backed by a reference engine in a subpackage."""
