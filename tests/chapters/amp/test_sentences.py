"""The sentence a quantization report prints follows the course's language:
English exactly as before, Chinese under ``set_language("zh")``, same numbers."""

import numpy as np
import pytest

from chapters.amp.formats import REPORT_TEXT, quantize
from chapters.language import LANGUAGES, set_language

# non-zero finite inputs: 6; overflow 2 (1e5, 7e4 > 65504), underflow to zero 2 (1e-9, -2e-8
# below half the smallest subnormal), subnormal 1 (1e-6), and 1.0 is exact
X = np.array([1e5, 7e4, 1.0, 1e-6, 1e-9, 0.0, -2e-8], np.float32)


@pytest.fixture(autouse=True)
def _english(english_by_default):
    """Each test starts and ends with no language chosen (English)."""


def test_quantize_report_in_english_is_unchanged():
    assert str(quantize(X, "float16")) == ("float16: overflow 33.33%, underflow to zero 33.33%, "
                                           "subnormal 16.67%, max relative error (normal "
                                           "values) 0")


def test_quantize_report_speaks_chinese():
    set_language("zh")
    assert str(quantize(X, "float16")) == ("float16：溢出 33.33%，下溢为零 33.33%，"
                                           "非规格化数 16.67%，最大相对误差（规格化数）0")


def test_every_language_has_a_report_sentence():
    assert set(REPORT_TEXT) == set(LANGUAGES)
