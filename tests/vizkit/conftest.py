"""Every vizkit test starts in English with no explicit language choice, whatever
the shell that runs pytest exports, and leaves no choice behind."""

import pytest

from vizkit.language import set_language


@pytest.fixture(autouse=True)
def english_by_default(monkeypatch):
    monkeypatch.delenv("COURSE_LANG", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    set_language(None)
    yield
    set_language(None)


@pytest.fixture
def chinese():
    """Run the test with the course speaking Chinese."""
    set_language("zh")
