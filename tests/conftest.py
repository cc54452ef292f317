"""Shared test configuration: CUDA-marked tests run only where a GPU is visible."""

import pytest
import torch

from chapters.language import set_language


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA: torch.cuda.is_available() is False here")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def english_by_default(monkeypatch):
    """Nothing chooses the course language (so it is English) for the test, and
    nothing is left chosen after it: no ``COURSE_LANG``, no Jupyter session path."""
    monkeypatch.delenv("COURSE_LANG", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    set_language(None)
    yield
    set_language(None)
