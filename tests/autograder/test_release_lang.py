"""``release LAB --lang zh``: the Chinese student notebook has the English release's
code cells (but for their translated strings) and public cases, with Chinese
markdown; an unknown language, a lab
without a Chinese edition, or a Chinese source whose code drifted are refused
with a message that says what to do."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil

import nbformat
import pytest

from autograder.cli import main
from autograder.release import ReleaseError, release, without_strings
from autograder.spec import load_lab

from .helpers import TOY, toy_lab

CHINESE = re.compile(r"[\u4e00-\u9fff]")
LAB = "lab1_graph"


def code_cells(nb) -> list[tuple]:
    return [(c.id, c.cell_type, c.source) for c in nb.cells if c.cell_type != "markdown"]


def code_apart_from_strings(nb) -> list[tuple]:
    return [(i, kind, without_strings(source)) for i, kind, source in code_cells(nb)]


def markdown_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "markdown"]


@pytest.fixture(scope="module")
def both_releases(tmp_path_factory):
    """The English and the Chinese release of lab 1, made by the CLI into one root."""
    root = tmp_path_factory.mktemp("release")
    for language in ("en", "zh"):
        assert main(["release", LAB, "--out", str(root), "--lang", language]) == 0
    return root / LAB, root / "zh" / LAB


def test_each_language_gets_its_own_folder_and_both_survive(both_releases):
    english, chinese = both_releases
    for folder in (english, chinese):
        assert sorted(p.name for p in folder.iterdir()) == ["lab1_graph.ipynb",
                                                            "public_cases.json"]


def test_the_chinese_release_has_the_english_code_and_public_cases(both_releases):
    english, chinese = both_releases
    en_nb = nbformat.read(english / f"{LAB}.ipynb", as_version=4)
    zh_nb = nbformat.read(chinese / f"{LAB}.ipynb", as_version=4)
    assert code_apart_from_strings(zh_nb) == code_apart_from_strings(en_nb)
    assert any(CHINESE.search(source) for _, _, source in code_cells(zh_nb))  # printed lines
    assert any('raise NotImplementedError("topological_sort：在这里写下你的解答")'
               in source for _, _, source in code_cells(zh_nb))  # the stub speaks Chinese too
    en_cases = json.loads((english / "public_cases.json").read_text())
    zh_cases = json.loads((chinese / "public_cases.json").read_text())
    assert zh_cases.pop("language") == "zh-CN" and "language" not in en_cases

    def without_hints(cases):
        return [{k: v for k, v in ex.items() if k not in ("hints", "hint")}
                for ex in cases["exercises"]]
    assert without_hints(zh_cases) == without_hints(en_cases)
    assert {k: v for k, v in zh_cases.items() if k != "exercises"} == {
        k: v for k, v in en_cases.items() if k != "exercises"}
    assert zh_nb.metadata["autograder"] == {"lab": LAB, "language": "zh"}


def test_the_chinese_release_has_chinese_markdown_in_the_english_places(both_releases):
    english, chinese = both_releases
    en_md = markdown_cells(nbformat.read(english / f"{LAB}.ipynb", as_version=4))
    zh_md = markdown_cells(nbformat.read(chinese / f"{LAB}.ipynb", as_version=4))
    assert [c.id for c in zh_md] == [c.id for c in en_md] and zh_md
    untranslated = [z.id for e, z in zip(en_md, zh_md, strict=True)
                    if z.source == e.source or not CHINESE.search(z.source)]
    assert not untranslated, f"markdown cells left in English: {untranslated}"


def test_an_unknown_language_is_refused_by_the_api_and_the_cli(tmp_path, capsys):
    with pytest.raises(ReleaseError, match="choose one of en, zh"):
        release(load_lab(LAB), tmp_path, language="fr")
    with pytest.raises(SystemExit) as exit_:
        main(["release", LAB, "--out", str(tmp_path), "--lang", "fr"])
    assert exit_.value.code == 2 and "invalid choice: 'fr'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_lab_without_a_chinese_edition_says_how_to_make_one(tmp_path, capsys):
    assert not (TOY / "source.zh.ipynb").exists()
    assert main(["release", str(TOY), "--out", str(tmp_path), "--lang", "zh"]) == 1
    err = capsys.readouterr().err
    for what in ("source.zh.ipynb does not exist", "EDITIONS in tools/i18n.py",
                 "python tools/i18n.py build", "--lang en"):
        assert what in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_chinese_source_whose_code_drifted_is_refused(tmp_path):
    shutil.copy(TOY / "source.ipynb", tmp_path / "source.ipynb")
    nb = nbformat.read(TOY / "source.ipynb", as_version=4)
    for cell in markdown_cells(nb):
        cell.source = "中文说明"
    nbformat.write(nb, tmp_path / "source.zh.ipynb")
    lab = dataclasses.replace(toy_lab(), source=tmp_path / "source.ipynb")
    made = release(lab, tmp_path / "out", language="zh")
    assert all(c.source == "中文说明" for c in markdown_cells(
        nbformat.read(made / f"{lab.id}.ipynb", as_version=4)))
    next(c for c in nb.cells if c.cell_type == "code").source += "\nx = 1"
    nbformat.write(nb, tmp_path / "source.zh.ipynb")
    with pytest.raises(ReleaseError, match="regenerate it with `python tools/i18n.py build`"):
        release(lab, tmp_path / "out", language="zh")
