"""Every vizkit test starts in English with no explicit language choice, whatever
the shell that runs pytest exports, and leaves no choice behind."""

import re

import pytest

from chapters.language import set_language


@pytest.fixture(autouse=True)
def _english(english_by_default):
    """Each test starts and ends with no language chosen (English)."""


@pytest.fixture
def chinese():
    """Run the test with the course speaking Chinese."""
    set_language("zh")


CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
"""A CJK character or a full-width punctuation mark."""


def numbers_in(text: str) -> list[str]:
    """Every number written in ``text``, sorted (the languages order words differently)."""
    return sorted(re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text))


@pytest.fixture
def in_both_languages():
    """``in_both_languages(make)`` calls ``make()`` in English, then in Chinese, and
    returns both results, checking that their texts carry the same numbers when
    both are strings (a summary must state what its figure shows, in either language)."""
    def run(make):
        set_language("en")
        english = make()
        set_language("zh")
        chinese = make()
        set_language(None)
        if isinstance(english, str):
            assert numbers_in(chinese) == numbers_in(english), (english, chinese)
            assert CHINESE.search(chinese), f"no Chinese in {chinese!r}"
        return english, chinese
    return run
