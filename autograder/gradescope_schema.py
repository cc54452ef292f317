"""JSON Schema of Gradescope's ``results.json``, written from Gradescope's documented
format for custom autograders ("Autograder Specifications": top-level ``score``,
``execution_time``, ``output``, ``output_format``, ``test_output_format``,
``test_name_format``, ``visibility``, ``stdout_visibility``, ``extra_data``,
``tests``, ``leaderboard``; each test ``score``, ``max_score``, ``status``,
``name``, ``name_format``, ``number``, ``output``, ``output_format``, ``tags``,
``visibility``, ``extra_data``). The formats are those of its "Output String
Formatting" (``text``, ``html``, ``simple_format``, ``md``, ``ansi``); the
visibilities those of "Controlling Test Case Visibility"."""

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}

TEST = {
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "max_score": {"type": "number", "minimum": 0},
        "status": {"enum": ["passed", "failed"]},
        "name": {"type": "string"},
        "name_format": FORMAT,
        "number": {"type": "string"},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "tags": {"type": "array", "items": {"type": "string"}},
        "visibility": VISIBILITY,
        "extra_data": {"type": "object"},
    },
    "additionalProperties": False,
}

RESULTS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Gradescope autograder results",
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "test_name_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST},
        "leaderboard": {
            "type": "array",
            "items": {"type": "object", "required": ["name", "value"],
                      "properties": {"name": {"type": "string"},
                                     "value": {"type": ["number", "string"]},
                                     "order": {"enum": ["asc", "desc"]}}},
        },
    },
    # Gradescope needs a score: at top level, or on every test.
    "anyOf": [{"required": ["score"]},
              {"required": ["tests"],
               "properties": {"tests": {"items": {"required": ["score"]}}}}],
    "additionalProperties": False,
}
