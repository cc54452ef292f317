"""vizkit.prediction: what the box holds back, how it judges, what it refuses.
(Chromium drives the box itself in tests/browser/test_prediction_box.py.)"""

from __future__ import annotations

import base64
import json
import re
from types import SimpleNamespace

import pytest

from vizkit.prediction import WIDGET, Answer, guess_box, held_back_html, prediction


def _rule(html: str) -> dict:
    return json.loads(base64.b64decode(re.search(r'data-rule="([^"]+)"', html).group(1)))


def test_the_answer_and_explanation_sit_in_the_hidden_part_only():
    answer = Answer()
    answer.number(8000, rtol=0.1)
    html = guess_box(answer, "<pre>8000 bytes saved</pre>", "Two tensors of **4000** bytes.")
    visible, hidden = html.split("<div class=\"vizkit-prediction-answer\" hidden>")
    assert "8000" not in visible.split("data-rule")[0] and "4000" not in visible
    assert "8000 bytes saved" in hidden and "<strong>4000</strong>" in hidden
    assert _rule(html) | {"words": None} == {"kind": "number", "value": 8000.0, "rtol": 0.1,
                                             "correct": None, "shown": "8000", "words": None}


def test_held_back_outputs_keep_their_richest_form_and_refuse_a_widget():
    captured = SimpleNamespace(stdout="printed <b>\n", outputs=[
        SimpleNamespace(data={"text/html": "<i>claim</i>", "text/plain": "claim"}),
        SimpleNamespace(data={"image/svg+xml": "<svg></svg>"}),
        SimpleNamespace(data={"text/plain": "a < b"})])
    html = held_back_html(captured)
    assert "printed &lt;b&gt;" in html and "<i>claim</i>" in html and "<svg></svg>" in html
    assert "a &lt; b" in html
    widget = SimpleNamespace(stdout="", outputs=[SimpleNamespace(data={WIDGET: {}})])
    with pytest.raises(ValueError, match="widget cannot wait behind a guess"):
        held_back_html(widget)


def test_a_failing_experiment_fails_the_cell():
    with pytest.raises(AssertionError, match="the measurement"):
        with prediction(why="never shown"):
            raise AssertionError("the measurement disagrees")


def test_a_choice_names_one_of_its_options():
    answer = Answer()
    with pytest.raises(ValueError, match="not an index of the 2 options"):
        answer.choice(["yes", "no"], correct=2)
    answer.choice(["yes", "no"], correct=1)
    assert answer.shown() == "no" and _rule(guess_box(answer, "", "x"))["correct"] == 1
