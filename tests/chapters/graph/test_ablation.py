"""The per-pass ablation: every variant computes the model's result, there is a
row per pass, and the ratios and byte counts are what they claim to be."""

import numpy as np

from chapters.graph import codegen, run_eager
from chapters.graph.ablation import (
    EAGER,
    TABLE_WORDS,
    ablation,
    bytes_per_call,
    format_table,
    variants,
)
from chapters.graph.passes import PIPELINE
from chapters.language import set_language
from chapters.text_table import display_width
from chapters.torchcheck import assert_close
from vizkit.timing import Timing


def gelu_mlp(x, w1, b1):
    h = x @ w1 + b1
    return 0.5 * h * (1 + (0.7978845608 * (h + 0.044715 * h ** 3)).tanh())


def inputs(batch=256, d=16, hidden=256):
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(s).astype(np.float32)
                 for s in ((batch, d), (d, hidden), (hidden,)))


def fake_timer(fns):
    """Each variant runs once; its 'time' is fixed by its position, so the
    expected ratios can be computed here, independently of the module."""
    for fn in fns.values():
        fn()
    return {name: Timing.of([k + 1.0, k + 2.0, k + 3.0]) for k, name in enumerate(fns)}


def test_every_variant_computes_the_models_result():
    args = inputs(batch=9)
    expected = run_eager(gelu_mlp, *args).outputs
    ways = variants(gelu_mlp, args)
    for name, way in ways.items():
        result = way.call()
        got = result.outputs if name == EAGER else result
        assert_close(got, expected, rtol=1e-5, atol=1e-6, what=name)


def test_a_row_per_pass_and_ratios_against_eager():
    rows = ablation(gelu_mlp, inputs(batch=9), fake_timer)
    names = [r.name for r in rows]
    assert names[0] == EAGER and names[-1].startswith("compile (all passes")
    for label in ("constant folding", "algebraic simplification", "common-subexpression",
                  "dead-code", "elementwise fusion", "memory planning"):
        assert sum(n.startswith(label) and n.endswith(" only") for n in names) == 1, label
    assert len(names) == len(PIPELINE) + 7 and "fusion only, numpy kernels" in names
    for k, row in enumerate(rows):  # eager's times are 1, 2, 3; row k's are k+1 .. k+3
        assert np.isclose(row.speedup, 2.0 / (k + 2.0))
        assert np.allclose(row.speedup_range, (1.5 / (k + 2.5), 2.5 / (k + 1.5)))
    table = format_table(rows)
    assert all(name in table for name in names) and table.count("x\n") >= len(rows) - 1


def test_fusion_cuts_kernels_and_full_size_temporaries():
    args = inputs()
    rows = {r.name: r for r in ablation(gelu_mlp, args, fake_timer)}
    traced, fused = rows["traced graph, no pass"], rows["elementwise fusion only"]
    assert traced.kernels == 10 and fused.kernels == 2  # matmul + 9 elementwise; matmul + fused
    full = 256 * 256 * 4  # bytes of one float32 hidden activation
    assert traced.per_call_bytes >= 3 * full  # several full-size temporaries alive at once
    assert fused.per_call_bytes < 3 * full  # matmul, output and block-sized scratch


def test_bytes_per_call_sees_numpy_allocations():
    assert 8000 <= bytes_per_call(lambda: np.ones(1000)) < 9000
    assert bytes_per_call(lambda: np.ones(1000) + np.ones(1000)) >= 16000


def test_the_numpy_kernel_row_runs_numpy_kernels(monkeypatch):
    seen = []
    real = codegen.generate_kernel
    monkeypatch.setattr(codegen, "generate_kernel",
                        lambda program, metas, language: seen.append(language) or real(
                            program, metas, language))
    ways = variants(gelu_mlp, inputs(batch=9))
    seen.clear()
    ways["fusion only, numpy kernels"].call()
    assert seen == ["numpy"]
    seen.clear()
    ways["elementwise fusion only"].call()
    assert seen == ["C"]


def test_the_table_speaks_the_course_language_and_keeps_its_row_keys():
    rows = ablation(gelu_mlp, inputs(batch=9), fake_timer)
    english, chinese = format_table(rows), None
    set_language("zh")
    try:
        chinese = format_table(rows)
    finally:
        set_language(None)
    assert english.split("\n")[0].split() == ["kernels", "KiB/call", "median", "ms", "IQR", "ms",
                                               "vs", "eager", "range"]
    assert "仅逐元素融合" in chinese and "elementwise fusion only" not in chinese
    assert all(r.name in TABLE_WORDS["zh"]["rows"] for r in rows)  # every default row translated
    assert [r.name for r in rows][0] == EAGER  # the keys stay English
    widths = {display_width(line) for line in chinese.split("\n")[1:]}  # rule and rows
    assert len(widths) == 1  # right-aligned last column: every row ends at one display column
