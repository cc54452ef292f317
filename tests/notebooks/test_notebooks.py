"""Every course notebook is stored without outputs and runs top to bottom
without showing a single error."""

import nbformat
import pytest

from .harness import ROOT, course_notebooks, execute

NOTEBOOKS = course_notebooks()
IDS = [str(p.relative_to(ROOT)) for p in NOTEBOOKS]


def test_there_are_notebooks_to_check():
    assert (ROOT / "chapters").is_dir()
    assert NOTEBOOKS, "no notebooks found under chapters/ or labs/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_committed_notebook_has_no_outputs(path):
    from .harness import cells_with_outputs

    nb = nbformat.read(path, as_version=4)
    dirty = cells_with_outputs(nb)
    assert not dirty, (
        f"{path.name} is stored with outputs in cells {dirty}; strip them with "
        f"`jupyter nbconvert --clear-output --inplace {path.relative_to(ROOT)}`."
    )


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_runs_top_to_bottom_without_errors(path, tmp_path):
    _, errors = execute(path, save_to=tmp_path / path.name)
    assert not errors, f"{path.name} shows {len(errors)} error(s):\n\n" + "\n\n".join(
        map(str, errors))
