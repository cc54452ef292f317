"""The Chinese edition in a real browser: its text is drawn with CJK glyphs, not
as empty boxes ("tofu"), in the markdown and in the figures of a Chinese chapter
run in JupyterLab (a Graphviz drawing and a plotly plot, whose Chinese labels
come from vizkit's tables), its slider works, and ``make lab LANG=zh`` opens it
in JupyterLab's Chinese interface without a click.

Glyphs are compared as pictures: each character is drawn on a canvas in the
font the rendered markdown uses. Without a CJK font every Chinese character
becomes the same box as a code point that no font covers (U+10FFFD); with one,
each character has its own, different picture. The canvas check proves it can
tell the two apart by also drawing two uncovered code points, which must give
the same box. A figure's text is checked the same way, in the font family the
figure asks for (the SVG's ``font-family``, plotly's inline style). Without a
CJK font (Debian: ``fonts-noto-cjk``) the glyph tests skip, unless
``COURSE_REQUIRE_BROWSER=1``. Screenshots go to each test's ``tmp_path``.
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
CHINESE_CHAPTER = ROOT / "chapters" / "zh" / "01_computational_graphs.ipynb"
SAMPLE = "计算图自动微分"          # distinct characters from the course map's first cell
TOFU_A, TOFU_B = "\U0010fffc", "\U0010fffd"   # private use: no font draws them

_MARKDOWN_FAMILY = """(sample) => {
    const block = Array.from(document.querySelectorAll('.jp-RenderedMarkdown'))
        .find(el => el.textContent.includes(sample.slice(0, 3)));
    return block ? getComputedStyle(block).fontFamily : null;
}"""

_GLYPH_PICTURES = """([family, sample, tofuA, tofuB]) => {
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
    return {family, applied: ctx.font, count: glyphs.length,
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
    family = page.evaluate(_MARKDOWN_FAMILY, SAMPLE)
    assert family is not None, f"no rendered markdown shows {SAMPLE[:3]!r}"
    assert_drawn_as_glyphs(page, family, SAMPLE, "the markdown")
    assert CHINESE_START.read_bytes() == stored, "the test modified the notebook on disk"


def assert_drawn_as_glyphs(page, family: str, sample: str, where: str) -> None:
    """Every character of ``sample`` (distinct Chinese characters) has a picture of its own
    in ``family``: not blank, not the box of a code point no font covers."""
    glyphs = page.evaluate(_GLYPH_PICTURES, [family, sample, TOFU_A, TOFU_B])
    assert glyphs["applied"].startswith("48px"), f"the canvas refused the font {family!r}"
    assert glyphs["tofu_pair_equal"], f"the canvas check cannot recognise tofu: {glyphs}"
    assert glyphs["inked"] == glyphs["count"], f"{where}: some characters draw nothing: {glyphs}"
    assert glyphs["like_tofu"] == 0 and glyphs["distinct"] == glyphs["count"], (
        f"{where}: Chinese text is drawn as tofu boxes in {family!r}: {glyphs}; install a CJK "
        "font (`sudo apt-get install fonts-noto-cjk`)")


# The Chinese text of the figures in the page, with the font family each asks for:
# Graphviz SVGs (shown as <img> data URIs, or inline) and plotly plots.
_FIGURE_TEXTS = """() => {
    const chinese = /[\u4e00-\u9fff]/;
    const found = {graphviz: [], plotly: []};
    const fromSvg = (svg) => {
        for (const text of svg.querySelectorAll('text'))
            if (chinese.test(text.textContent))
                found.graphviz.push({text: text.textContent,
                                     family: text.getAttribute('font-family') || ''});
    };
    for (const img of document.querySelectorAll('OUTPUT_AREA img')) {
        const src = img.getAttribute('src') || '';
        if (!src.startsWith('data:image/svg+xml') || !(img.naturalWidth > 0)) continue;
        const body = src.slice(src.indexOf(',') + 1);
        const text = src.slice(0, src.indexOf(',')).endsWith(';base64')
            ? new TextDecoder().decode(Uint8Array.from(atob(body), c => c.charCodeAt(0)))
            : decodeURIComponent(body);
        if (/Generated by graphviz/i.test(text))
            fromSvg(new DOMParser().parseFromString(text, 'image/svg+xml'));
    }
    for (const svg of document.querySelectorAll('OUTPUT_AREA svg'))
        if (!svg.closest('.js-plotly-plot') && svg.querySelector('g.graph')) fromSvg(svg);
    for (const text of document.querySelectorAll('OUTPUT_AREA .js-plotly-plot svg text'))
        if (chinese.test(text.textContent) && text.getBoundingClientRect().width > 0)
            found.plotly.push({text: text.textContent,
                               family: getComputedStyle(text).fontFamily});
    return found;
}""".replace("OUTPUT_AREA", lab.OUTPUT)


def chinese_sample(texts: list[dict], size: int = 6) -> tuple[str, str]:
    """The font family of the first text and up to ``size`` distinct Chinese characters
    drawn in it."""
    family = texts[0]["family"]
    chars = "".join(t["text"] for t in texts if t["family"] == family)
    distinct = dict.fromkeys(c for c in chars if "\u4e00" <= c <= "\u9fff")
    return family, "".join(list(distinct)[:size])


def test_a_chinese_chapter_runs_and_its_figures_speak_chinese_in_glyphs(lab_page, jupyterlab,
                                                                        tmp_path):
    """Chapter 1 in Chinese, run with Run All: no error; its Graphviz drawings and plotly
    plots carry Chinese text drawn as glyphs; its slider changes what its cell shows."""
    require_cjk_font()
    stored = CHINESE_CHAPTER.read_bytes()
    page = lab_page
    state = lab.run_to_the_end(page, jupyterlab.url(CHINESE_CHAPTER.relative_to(ROOT).as_posix()),
                               tmp_path / "zh-01-end.png", timeout_ms=240_000)
    assert not state["errors"], f"error outputs: {state['errors']}"
    assert state["executed"] == state["code"], state
    page.wait_for_function(f"() => ({lab._PLOTLY_PLOTS}) () > 0", timeout=20_000)

    texts = page.evaluate(_FIGURE_TEXTS)
    for kind in ("graphviz", "plotly"):
        assert texts[kind], f"no {kind} figure shows Chinese text: {texts}"
        family, sample = chinese_sample(texts[kind])
        assert len(sample) >= 3, (kind, texts[kind][:3])
        assert_drawn_as_glyphs(page, family, sample, f"a {kind} figure")
    page.locator(f"{lab.OUTPUT} img[src^='data:image/svg+xml']").first \
        .scroll_into_view_if_needed()
    page.screenshot(path=tmp_path / "zh-01-graphviz.png")
    page.locator(f"{lab.OUTPUT} .js-plotly-plot").first.scroll_into_view_if_needed()
    page.screenshot(path=tmp_path / "zh-01-plotly.png")

    before, after = lab.move_a_slider(page)
    assert before != after, "moving the slider did not change its output"
    page.screenshot(path=tmp_path / "zh-01-slider.png")
    assert CHINESE_CHAPTER.read_bytes() == stored, "the test modified the notebook on disk"


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
