"""chapters.language: an explicit choice beats COURSE_LANG, which beats the notebook's path."""

import subprocess
import sys

import pytest

from chapters.language import language, language_of_path, set_language


def test_english_when_nothing_says_otherwise():
    assert language() == "en"


@pytest.mark.parametrize("path, expected", [
    ("chapters/zh/01_computational_graphs.ipynb", "zh"),
    ("/srv/course/chapters/zh/00_start_here.ipynb", "zh"),
    ("labs/lab1_graphs/source.zh.ipynb", "zh"),
    ("chapters/01_computational_graphs.ipynb", None),
    ("labs/lab1_graphs/source.ipynb", None),
    ("chapters/zh_notes.ipynb", None),
])
def test_path_is_chinese_inside_a_zh_folder_or_named_zh_ipynb(path, expected):
    assert language_of_path(path) == expected


def test_notebook_path_from_the_jupyter_server(monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "chapters/zh/02_automatic_differentiation.ipynb")
    assert language() == "zh"
    monkeypatch.setenv("JPY_SESSION_NAME", "chapters/02_automatic_differentiation.ipynb")
    assert language() == "en"


def test_environment_beats_the_path_and_an_explicit_choice_beats_both(monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", "chapters/zh/02_automatic_differentiation.ipynb")
    monkeypatch.setenv("COURSE_LANG", "en")
    assert language() == "en"
    monkeypatch.setenv("COURSE_LANG", "zh_CN")
    assert language() == "zh"
    set_language("en")
    assert language() == "en"
    set_language(None)
    assert language() == "zh"


def test_unknown_languages_are_refused_with_the_choices(monkeypatch):
    with pytest.raises(ValueError, match="unknown language 'fr'; use one of en, zh"):
        set_language("fr")
    monkeypatch.setenv("COURSE_LANG", "de")
    with pytest.raises(ValueError, match="environment variable COURSE_LANG"):
        language()


def test_the_autograder_can_import_it_without_numerical_or_plotting_packages():
    code = ("import sys, chapters.language as l; l.language(); "
            "print(sorted(m for m in ('numpy', 'plotly', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_notebook_harness_runs_chinese_notebooks_in_chinese(tmp_path):
    import nbformat

    from tests.notebooks.harness import execute

    for folder, expected in (("zh", "zh"), ("en", "en")):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "probe.ipynb"
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
            "from chapters.language import language\nprint(language())")])
        nbformat.write(nb, path)
        executed, errors = execute(path, timeout=60)
        assert not errors
        assert executed.cells[0].outputs[0]["text"].strip() == expected
