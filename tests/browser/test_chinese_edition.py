"""The Chinese edition in a real browser: its text is drawn with CJK glyphs, not
as empty boxes ("tofu"), and ``make lab LANG=zh`` opens it in JupyterLab's
Chinese interface without a click.

Glyphs are compared as pictures: each character is drawn on a canvas in the
font the rendered markdown uses. Without a CJK font every Chinese character
becomes the same box as a code point that no font covers (U+10FFFD); with one,
each character has its own, different picture. The canvas check proves it can
tell the two apart by also drawing two uncovered code points, which must give
the same box. Without a CJK font (Debian: ``fonts-noto-cjk``) the glyph test
skips, unless ``COURSE_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import subprocess
import urllib.request

import pytest

from tests.notebooks.harness import ROOT
from tests.system_deps import missing

from . import lab_page as lab
from .jupyterlab_server import _wait_until_up, _write_settings, free_port, project_python, stop

pytestmark = pytest.mark.browser

CHINESE_START = ROOT / "chapters" / "zh" / "00_start_here.ipynb"
SAMPLE = "计算图自动微分"          # distinct characters from the course map's first cell
TOFU_A, TOFU_B = "\U0010fffc", "\U0010fffd"   # private use: no font draws them

_GLYPH_PICTURES = """([sample, tofuA, tofuB]) => {
    const block = Array.from(document.querySelectorAll('.jp-RenderedMarkdown'))
        .find(el => el.textContent.includes(sample.slice(0, 3)));
    if (!block) return null;
    const family = getComputedStyle(block).fontFamily;
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 64;
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    ctx.font = `48px ${family}`;
    const picture = ch => {
        ctx.clearRect(0, 0, 64, 64);
        ctx.fillText(ch, 4, 52);
        const alpha = ctx.getImageData(0, 0, 64, 64).data.filter((_, i) => i % 4 === 3);
        return {key: alpha.join(','), inked: alpha.some(a => a > 0)};
    };
    const glyphs = Array.from(sample).map(picture);
    const tofu = picture(tofuB);
    return {family, count: glyphs.length,
            distinct: new Set(glyphs.map(g => g.key)).size,
            inked: glyphs.filter(g => g.inked).length,
            like_tofu: glyphs.filter(g => g.key === tofu.key).length,
            tofu_pair_equal: picture(tofuA).key === tofu.key};
}"""


def require_cjk_font() -> None:
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        missing("fontconfig's fc-list is not installed, so the CJK font cannot be looked up",
                "COURSE_REQUIRE_BROWSER")
    found = subprocess.run([fc_list, ":lang=zh", "family"], capture_output=True, text=True)
    if not found.stdout.strip():
        missing("no font for Chinese is installed: `sudo apt-get install fonts-noto-cjk`",
                "COURSE_REQUIRE_BROWSER")


def test_chinese_chapter_0_is_drawn_with_cjk_glyphs(lab_page, jupyterlab, tmp_path):
    require_cjk_font()
    stored = CHINESE_START.read_bytes()
    page = lab_page
    lab.open_notebook(page, jupyterlab.url(CHINESE_START.relative_to(ROOT).as_posix()))
    page.wait_for_selector(f".jp-RenderedMarkdown:has-text('{SAMPLE[:3]}')", timeout=30_000)
    page.screenshot(path=tmp_path / "zh-00_start_here.png")
    glyphs = page.evaluate(_GLYPH_PICTURES, [SAMPLE, TOFU_A, TOFU_B])
    assert glyphs is not None, f"no rendered markdown shows {SAMPLE[:3]!r}"
    assert glyphs["tofu_pair_equal"], f"the canvas check cannot recognise tofu: {glyphs}"
    assert glyphs["inked"] == glyphs["count"], f"some characters draw nothing: {glyphs}"
    assert glyphs["like_tofu"] == 0 and glyphs["distinct"] == glyphs["count"], (
        f"Chinese text is drawn as tofu boxes in {glyphs['family']!r}: {glyphs}; install a CJK "
        "font (`sudo apt-get install fonts-noto-cjk`)")
    assert CHINESE_START.read_bytes() == stored, "the test modified the notebook on disk"


def make_lab_arguments(language: str) -> list[str]:
    """The JupyterLab options ``make lab LANG=<language>`` passes, read from a dry run."""
    if shutil.which("make") is None:
        pytest.skip("`make` is not installed")
    dry = subprocess.run(["make", "-n", "-C", str(ROOT), "lab", f"LANG={language}"],
                         capture_output=True, text=True, check=True)
    line = next(l for l in dry.stdout.splitlines() if "jupyter lab" in l)
    return shlex.split(line.split("jupyter lab", 1)[1].split("$(", 1)[0])


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def test_make_lab_lang_zh_opens_the_chinese_edition_in_the_chinese_interface(chromium, tmp_path):
    token, port = secrets.token_hex(16), free_port()
    dirs = {name: tmp_path / name for name in ("config", "runtime", "settings", "workspaces")}
    for folder in dirs.values():
        folder.mkdir()
    _write_settings(dirs["settings"])
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(dirs["config"]),
               JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
               JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
               JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]))
    command = [project_python(ROOT), "-m", "jupyterlab", *make_lab_arguments("zh"),
               "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = tmp_path / "jupyterlab.log"
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as sink:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    try:
        _wait_until_up(f"{base}/api/status?token={token}", server, log, 90)
        plugin = _get_json(f"{base}/lab/api/settings/"
                           f"@jupyterlab/translation-extension:plugin?token={token}")
        assert plugin["schema"]["properties"]["locale"]["default"] == "zh_CN"
        page = context.new_page()
        page.goto(f"{base}/?token={token}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
        page.wait_for_selector(".jp-RenderedMarkdown:has-text('从这里开始')", timeout=30_000)
        menus = page.locator("#jp-menu-panel .lm-MenuBar-itemLabel").all_inner_texts()
        page.screenshot(path=tmp_path / "make-lab-lang-zh.png")
        assert page.url.split("?")[0].endswith("/lab/tree/chapters/zh/00_start_here.ipynb")
        assert {"编辑", "设置"} <= set(menus), f"the menu bar is not in Chinese: {menus}"
    finally:
        context.close()
        stop(server)
