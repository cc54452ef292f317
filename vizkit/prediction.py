"""Predictions the learner makes before the answer shows: :class:`prediction`.

A "predict, then run" prompt asks a question in markdown; the cell under it runs
the experiment inside ``with prediction(why=...) as answer:``. Everything the
experiment prints or displays (its numbers, its claims) is held back. What the
cell shows is a guess box and a button: the experiment's output and the
explanation ``why`` appear only once a guess is entered, next to a verdict.

The answer is what the experiment measured, handed over inside the block:

* ``answer.number(value, rtol=0)``: the learner types a number, right when
  within ``rtol`` (relative) of ``value``;
* ``answer.choice(options, correct)``: the learner picks one of ``options``;
* neither: the learner writes a guess in words and compares it by eye.

The box is plain HTML with a small script, so it works offline in JupyterLab (a
cell run in the session is trusted) and on the static site, without a kernel
behind it. The cell's source is kept collapsed (``source_hidden`` metadata), so
the assertions inside do not give the answer away either; opening it is a
deliberate choice. The assertions still run on every execution, so the test
suite checks each answer as before.
"""

from __future__ import annotations

import base64
import html
import json
import uuid
from dataclasses import dataclass, field

import mistune
from IPython.display import display
from IPython.utils.capture import capture_output

from vizkit.strings import check_table, words

TEXT = check_table({
    "en": {"guess": "Your guess", "guess_label": "Your guess:", "check": "Check",
           "placeholder": "type your guess",
           "empty": "Make a guess first.", "right": "Right.",
           "wrong": "Not quite: the answer is {answer}.", "open": "Your guess: {guess}.",
           "answer": "What the cell measured:", "why": "Why",
           "plain": "[a prediction: open this cell in JupyterLab or on the course site to "
                    "guess, then see the answer]"},
    "zh": {"guess": "你的猜测", "guess_label": "你的猜测：", "check": "核对",
           "placeholder": "输入你的猜测",
           "empty": "请先写下猜测。", "right": "猜对了。",
           "wrong": "不完全对：答案是 {answer}。", "open": "你的猜测：{guess}。",
           "answer": "这个单元格测得：", "why": "为什么",
           "plain": "［一道预测题：在 JupyterLab 或课程网站上打开这个单元格，先猜，再看答案］"},
})

WIDGET = "application/vnd.jupyter.widget-view+json"
_render_markdown = mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])


@dataclass
class Answer:
    """How a guess is judged; filled in by the experiment inside the block."""

    kind: str = "open"
    value: float | None = None
    rtol: float = 0.0
    options: list[str] = field(default_factory=list)
    correct: int | None = None

    def number(self, value, rtol: float = 0.0) -> None:
        """The answer is ``value``; a guess within ``rtol`` of it (relative) is right."""
        self.kind, self.value, self.rtol = "number", float(value), float(rtol)

    def choice(self, options: list[str], correct: int) -> None:
        """The answer is ``options[correct]``; the learner picks one option."""
        if not 0 <= correct < len(options):
            raise ValueError(f"answer.choice: correct={correct} is not an index of the "
                             f"{len(options)} options")
        self.kind, self.options, self.correct = "choice", list(options), int(correct)

    def shown(self) -> str:
        """The answer as the verdict names it."""
        if self.kind == "number":
            return f"{self.value:g}"
        return self.options[self.correct] if self.kind == "choice" else ""


class prediction:  # noqa: N801  (a context manager, named as what it makes)
    """``with prediction(why=markdown) as answer:`` runs the experiment, holds back what
    it shows, and shows a guess box that reveals it (see the module docstring)."""

    def __init__(self, why: str):
        self.why = why
        self.answer = Answer()

    def __enter__(self) -> Answer:
        self._capture = capture_output(stdout=True, stderr=False, display=True)
        self._captured = self._capture.__enter__()
        return self.answer

    def __exit__(self, kind, error, trace) -> bool:
        self._capture.__exit__(kind, error, trace)
        if kind is not None:        # an experiment that failed shows everything, then fails
            self._captured.show()
            return False
        box = guess_box(self.answer, held_back_html(self._captured), self.why)
        display({"text/html": box, "text/plain": words(TEXT)["plain"]}, raw=True,
                metadata={"vizkit": "prediction"})
        return False


def held_back_html(captured) -> str:
    """The experiment's printed text and displayed outputs, as HTML."""
    parts = [f"<pre>{html.escape(captured.stdout)}</pre>"] if captured.stdout.strip() else []
    for output in captured.outputs:
        data = output.data
        if WIDGET in data:
            raise ValueError("prediction: a widget cannot wait behind a guess (it needs the live "
                             "kernel the reveal does not have); show it in a cell after the "
                             "prediction")
        if "text/html" in data:
            parts.append(data["text/html"])
        elif "image/svg+xml" in data:
            parts.append(data["image/svg+xml"])
        elif "image/png" in data:
            parts.append(f"<img src='data:image/png;base64,{data['image/png']}'>")
        elif "text/markdown" in data:
            parts.append(_render_markdown(data["text/markdown"]))
        else:
            parts.append(f"<pre>{html.escape(data.get('text/plain', ''))}</pre>")
    return "\n".join(parts)


def guess_box(answer: Answer, revealed_html: str, why: str) -> str:
    """The widget: a guess input for ``answer``'s kind, a button, and (hidden until a
    guess is checked) ``revealed_html`` and the explanation ``why`` (markdown)."""
    said = words(TEXT)
    box = f"vizkit-prediction-{uuid.uuid4().hex[:12]}"
    if answer.kind == "choice":
        field_html = "".join(
            f"<label style='margin-right:1.2em'><input type='radio' name='{box}' value='{i}'> "
            f"{html.escape(option)}</label>" for i, option in enumerate(answer.options))
    else:
        kind = "number" if answer.kind == "number" else "text"
        field_html = (f"<input type='{kind}' step='any' aria-label='{said['guess']}' "
                      f"placeholder='{said['placeholder']}' style='width:14em'>")
    rule = {"kind": answer.kind, "value": answer.value, "rtol": answer.rtol,
            "correct": answer.correct, "shown": answer.shown(),
            "words": {k: said[k] for k in ("empty", "right", "wrong", "open")}}
    rule_b64 = base64.b64encode(json.dumps(rule).encode()).decode()
    why_html = _render_markdown(why)
    return f"""<div id="{box}" class="vizkit-prediction" data-rule="{rule_b64}"
 style="border-left:3px solid #7a6; padding:.4em .8em; margin:.3em 0">
<b>{said['guess_label']}</b> {field_html}
<button type="button" class="vizkit-prediction-check">{said['check']}</button>
<span class="vizkit-prediction-verdict" style="margin-left:.8em"></span>
<div class="vizkit-prediction-answer" hidden>
<div style="margin-top:.5em"><i>{said['answer']}</i></div>{revealed_html}
<div style="margin-top:.5em"><b>{said['why']}</b></div>{why_html}
</div></div>
<script>{_SCRIPT % json.dumps(box)}</script>"""


_SCRIPT = """(function () {
  var box = document.getElementById(%s);
  if (!box || box.dataset.ready) { return; }
  box.dataset.ready = "1";
  var rule = JSON.parse(atob(box.dataset.rule));
  var verdict = box.querySelector(".vizkit-prediction-verdict");
  var check = box.querySelector(".vizkit-prediction-check");
  var input = box.querySelector("input[type=number], input[type=text]");
  function guess() {
    if (rule.kind === "choice") {
      var picked = box.querySelector("input[type=radio]:checked");
      return picked ? Number(picked.value) : null;
    }
    var text = input.value.trim();
    if (!text) { return null; }
    return rule.kind === "number" ? Number(text) : text;
  }
  function judge() {
    var g = guess();
    if (g === null || (rule.kind === "number" && !isFinite(g))) {
      verdict.textContent = rule.words.empty; return;
    }
    var right = rule.kind === "number" ?
      Math.abs(g - rule.value) <= rule.rtol * Math.abs(rule.value) :
      rule.kind === "choice" ? g === rule.correct : null;
    verdict.textContent = right === null ? rule.words.open.replace("{guess}", g) :
      right ? rule.words.right : rule.words.wrong.replace("{answer}", rule.shown);
    box.querySelectorAll("input, button").forEach(function (e) { e.disabled = true; });
    box.querySelector(".vizkit-prediction-answer").hidden = false;
    if (window.Plotly) {      // figures drawn while hidden take their size now
      box.querySelectorAll(".js-plotly-plot").forEach(function (p) {
        window.Plotly.Plots.resize(p);
      });
    }
    if (window.MathJax && window.MathJax.Hub) {
      window.MathJax.Hub.Queue(["Typeset", window.MathJax.Hub, box]);
    }
  }
  check.addEventListener("click", judge);
  if (input) {
    input.addEventListener("keydown", function (e) { if (e.key === "Enter") { judge(); } });
  }
})();"""
