"""The harness itself must catch both kinds of failure."""

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from .harness import cells_with_outputs, execute


def _write(tmp_path, *sources):
    path = tmp_path / "probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in sources]), path)
    return path


def test_a_raising_cell_is_reported(tmp_path):
    _, errors = execute(_write(tmp_path, "x = 1", "1 / 0", "y = 2"))
    assert [(e.index, e.ename) for e in errors] == [(1, "ZeroDivisionError")]


def test_an_error_inside_a_display_formatter_is_reported(tmp_path):
    # The cell itself succeeds; only the rich display raises, leaving an error output.
    source = (
        "class Broken:\n"
        "    def _repr_svg_(self):\n"
        "        raise RuntimeError('dot not found')\n"
        "Broken()"
    )
    nb, errors = execute(_write(tmp_path, source))
    assert errors and "dot not found" in errors[0].evalue


def test_a_clean_notebook_has_no_errors_and_outputs_are_detected(tmp_path):
    nb, errors = execute(_write(tmp_path, "print('hello')"))
    assert errors == []
    assert cells_with_outputs(nb) == [0]


def test_an_error_inside_an_output_widget_is_reported_and_does_not_stall(tmp_path):
    source = (
        "import ipywidgets as w\n"
        "out = w.Output()\n"
        "display(out)\n"
        "with out:\n"
        "    print('drawing')\n"
        "    raise ValueError('bad slider state')"
    )
    _, errors = execute(_write(tmp_path, source, "z = 3"), timeout=30)
    assert [(e.index, e.ename) for e in errors] == [(0, "ValueError")]


def test_a_false_claim_fails_the_notebook_with_its_sentence_and_numbers(tmp_path):
    _, errors = execute(_write(tmp_path, "from vizkit import claim",
                               "claim('x is bigger', False, {'x': 1})"), timeout=60)
    assert [(e.index, e.ename) for e in errors] == [(1, "ClaimNotSupported")]
    assert "'x is bigger'" in errors[0].evalue and "x = 1" in errors[0].evalue


def test_a_true_claim_passes_and_shows_its_evidence(tmp_path):
    nb, errors = execute(_write(tmp_path, "from vizkit import claim",
                                "claim('x is positive', True, {'x': 1})"), timeout=60)
    assert errors == []
    shown = nb.cells[1].outputs[0]["data"]
    assert "x is positive" in shown["text/plain"] and "x = 1" in shown["text/html"]
