"""Measured sentences that check themselves: :func:`claim`.

A figure summary such as "compiled runs faster than eager" is only as good as
the measurement behind it. ``claim(text, holds, evidence)`` shows the sentence
with the numbers that back it, and raises :class:`ClaimNotSupported` when the
numbers do not, so the notebook shows an error and its test fails instead of
teaching something this run did not show.
"""

from __future__ import annotations

import html
import numbers
from dataclasses import dataclass, field

from IPython.display import display

from vizkit.strings import check_table, words

WORDS = check_table({
    "en": {"measured": "measured", "checked": "checked against this run"},
    "zh": {"measured": "实测", "checked": "已用本次运行的测量核对"},
})


class ClaimNotSupported(AssertionError):
    """A sentence of the course text that this run's measurements contradict."""


def format_value(value) -> str:
    """A compact rendering of one piece of evidence: 3 significant digits for reals."""
    if isinstance(value, bool | numbers.Integral):
        return str(value)
    if isinstance(value, numbers.Real):
        return f"{float(value):.3g}"
    return str(value)


@dataclass(frozen=True)
class Claim:
    """A sentence and the evidence (name -> number or text) it rests on."""

    text: str
    holds: bool
    evidence: dict = field(default_factory=dict)

    def evidence_text(self) -> str:
        """``name = value`` pairs joined by commas."""
        return ", ".join(f"{name} = {format_value(v)}" for name, v in self.evidence.items())

    def check(self) -> Claim:
        """Return self, or raise :class:`ClaimNotSupported` naming sentence and numbers."""
        if not self.holds:
            raise ClaimNotSupported(f"the measurements do not support {self.text!r}; "
                                    f"evidence: {self.evidence_text() or 'none given'}")
        return self

    def __repr__(self) -> str:
        evidence = f" [{self.evidence_text()}]" if self.evidence else ""
        return f"✓ {self.text}{evidence}"

    def _repr_html_(self) -> str:
        items = "".join(
            f"<code style='margin-right:0.8em'>{html.escape(name)} = "
            f"{html.escape(format_value(v))}</code>" for name, v in self.evidence.items())
        said = words(WORDS)
        # the numbers back the sentence; they wait, collapsed, for a reader who asks
        note = (f"<details style='margin-left:1.2em'><summary><small>{said['measured']}"
                f"</small></summary><small>{items}</small></details>") if items else ""
        return (f"<div class='vizkit-claim'><span title='{said['checked']}'>✓</span> "
                f"{html.escape(self.text)}{note}</div>")


def claim(text: str, holds, evidence: dict | None = None) -> None:
    """Show ``text`` with its ``evidence`` if ``holds`` is true; raise otherwise.

    ``holds`` is the test the measurement must pass (``t_fast < t_slow``,
    ``faster(a, b, margin)``...); ``evidence`` maps names to the measured numbers
    (or short strings) a reader needs to judge the sentence.
    """
    display(Claim(text, bool(holds), dict(evidence or {})).check())
