"""claim() shows a supported sentence with its numbers and refuses an unsupported one."""

import numpy as np
import pytest

from vizkit import ClaimNotSupported, claim
from vizkit.claims import Claim, format_value


def test_a_false_claim_raises_naming_the_sentence_and_the_numbers():
    with pytest.raises(ClaimNotSupported) as caught:
        claim("x is bigger", False, {"x": 1, "y": 2.5})
    message = str(caught.value)
    assert "'x is bigger'" in message and "x = 1" in message and "y = 2.5" in message
    assert isinstance(caught.value, AssertionError)


def test_a_true_claim_is_shown_with_its_evidence(capsys):
    claim("y is bigger", np.bool_(True), {"x": 1, "y": np.float32(2.5)})
    assert capsys.readouterr().out.strip() == "✓ y is bigger [x = 1, y = 2.5]"


def test_evidence_is_compact_and_html_is_escaped():
    assert [format_value(v) for v in (3, True, 0.000123456, 1234567.0, "1.5x")] == [
        "3", "True", "0.000123", "1.23e+06", "1.5x"]
    page = Claim("a < b", True, {"<ratio>": 0.5})._repr_html_()
    assert "a &lt; b" in page and "&lt;ratio&gt; = 0.5" in page
    assert repr(Claim("no numbers", True)) == "✓ no numbers"


def test_a_claim_without_evidence_says_so_when_it_fails():
    with pytest.raises(ClaimNotSupported, match="evidence: none given"):
        claim("it works", False)


def test_the_evidence_is_collapsed_under_an_english_label_by_default():
    page = Claim("a < b", True, {"ratio": 0.5})._repr_html_()
    assert "<details" in page and "<summary><small>measured</small></summary>" in page
    assert page.index("</summary>") < page.index("ratio = 0.5") < page.index("</details>")


def test_the_evidence_label_speaks_chinese_in_the_chinese_edition(chinese):
    page = Claim("a < b", True, {"ratio": 0.5})._repr_html_()
    assert "<small>实测</small>" in page and "measured" not in page and "ratio = 0.5" in page
