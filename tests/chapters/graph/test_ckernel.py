"""C kernels: every op they handle agrees with eager and torch (NaN, infinite
and signed-zero inputs included), inputs are read by their broadcast layout,
other programs fall back to the numpy kernel, a missing compiler warns once
(or fails under COURSE_REQUIRE_CC=1), and compiled modules are cached on disk."""

import re
import shutil
import warnings

import numpy as np
import pytest
import torch

from chapters.graph import ckernel, codegen, compile, run, trace
from chapters.graph.fused import FusedProgram
from chapters.graph.ops import TensorMeta
from chapters.graph.passes import fuse_elementwise
from chapters.torchcheck import assert_close
from tests.system_deps import require_cc

# -ffast-math and glibc's vector math functions: a few ulp from numpy's results
FORWARD_TOL = {np.float32: dict(rtol=2e-6, atol=1e-30), np.float64: dict(rtol=1e-13, atol=1e-300)}
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0, -3.0, 1e-20,
           88.0, -100.0]
UNARY = {"neg": lambda a: -a, "abs": lambda a: abs(a), "exp": lambda a: a.exp(),
         "log": lambda a: a.log(), "sqrt": lambda a: a.sqrt(), "tanh": lambda a: a.tanh()}
BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "pow": lambda a, b: a ** b}


@pytest.fixture(autouse=True)
def fresh_kernels():
    """Kernels built in one test are not reused by another (the environment may differ)."""
    codegen.generate_kernel.cache_clear()
    ckernel.warn_once.cache_clear()
    yield
    codegen.generate_kernel.cache_clear()
    ckernel.warn_once.cache_clear()


def kernels_of(graph):
    return [codegen.kernel_for(n.attrs["program"], tuple(i.meta for i in n.inputs))
            for n in graph.topological_order() if n.op == "fused"]


def check_against_eager_and_torch(fn, arrays, dtype, tolerance=None):
    """Run ``fn`` unfused (eager numpy kernels), fused into one C kernel, and in
    torch; the three agree within ``tolerance`` (default FORWARD_TOL[dtype]),
    NaN and inf included, and zeros keep their sign."""
    tolerance = tolerance or FORWARD_TOL[dtype]
    with np.errstate(all="ignore"):
        graph = trace(fn, *arrays)
        eager = run(graph, *arrays)
        fuse_elementwise(graph, min_ops=1)
        assert [k.language for k in kernels_of(graph)] == ["C"]
        ours = run(graph, *arrays)
    theirs = fn(*(torch.from_numpy(a.copy()) for a in arrays)).numpy()
    assert_close(ours, eager, **tolerance, what="C kernel vs eager")
    assert_close(ours, theirs, **tolerance, what="C kernel vs torch")
    zeros = eager == 0
    assert np.array_equal(np.signbit(ours[zeros]), np.signbit(eager[zeros])), "sign of zero"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_ops_agree_with_eager_and_torch(op, dtype):
    require_cc()
    rng = np.random.default_rng(0)
    x = np.concatenate([SPECIAL, rng.uniform(-5, 5, 49)]).astype(dtype).reshape(8, 8)
    check_against_eager_and_torch(UNARY[op], [x], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_ops_agree_with_eager_and_torch(op, dtype):
    require_cc()
    a, b = np.meshgrid(np.array(SPECIAL, dtype), np.array(SPECIAL, dtype))
    check_against_eager_and_torch(BINARY[op], [a, b], dtype)


def test_every_templated_op_is_tested():
    assert set(ckernel.C_TEMPLATES) == set(UNARY) | set(BINARY)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [
    [(6, 5), (5,)],            # a bias: row layout
    [(6, 5), (1, 5), ()],      # a broadcast row and a 0-d scalar
    [(2, 3, 4), (4,), (1,)],   # three dimensions, a one-element scalar
    [(7,), ()],                # one dimension
    [(), ()],                  # scalars only
])
def test_broadcast_layouts(shapes, dtype):
    require_cc()
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-2, 2, s).astype(dtype) for s in shapes]
    fn = {2: lambda x, b: (x * b + 1).tanh(),
          3: lambda x, b, s: ((x + b) ** s.__abs__()).exp() - x}[len(shapes)]
    check_against_eager_and_torch(fn, arrays, dtype)


def test_gelu_keeps_its_pow_and_agrees():
    require_cc()
    gelu = lambda h: 0.5 * h * (1 + (0.7978845608 * (h + 0.044715 * h ** 3)).tanh())  # noqa: E731
    h = np.random.default_rng(2).standard_normal((33, 70)).astype(np.float32)
    # 1 + tanh(...) cancels where tanh is near -1: an absolute tolerance on values of order 1
    check_against_eager_and_torch(gelu, [h], np.float32, dict(rtol=2e-6, atol=1e-6))
    graph = trace(gelu, h)
    fuse_elementwise(graph)
    (kernel,) = kernels_of(graph)
    # the exponent is an argument read before the loop, not a literal that
    # -ffast-math could turn into h * h * h
    assert re.search(r"powf\(in\d\[i\], s\d\)", kernel.source) and "3.0" not in kernel.source


def test_non_contiguous_and_aliased_arrays():
    require_cc()
    rng = np.random.default_rng(3)
    x = np.asfortranarray(rng.standard_normal((9, 6)))
    b = rng.standard_normal(6)
    fn = lambda x, b: ((x + b) * x).tanh() - x  # noqa: E731
    graph = trace(fn, x, b)
    expected = run(graph, x, b)
    fuse_elementwise(graph)
    (node,) = [n for n in graph.topological_order() if n.op == "fused"]
    (kernel,) = kernels_of(graph)
    assert kernel.language == "C"
    out_t = np.empty((6, 9)).T  # a non-contiguous output
    assert_close(kernel(out_t, x, b), expected, rtol=1e-13, atol=1e-15, what="strided")
    buffer = np.ascontiguousarray(x)  # the planner may write the result over x
    kernel(buffer, buffer, b)
    assert_close(buffer, expected, rtol=1e-13, atol=1e-15, what="in place")
    assert node.meta == TensorMeta((9, 6), np.float64)


@pytest.mark.parametrize("fn, x, reason", [
    (lambda x: (x * 2).relu() + 1, np.ones((4, 3), np.float32), "step 1 (relu) has no C template"),
    (lambda x: (x * 2) - x, np.ones((4, 3), np.int64), "its dtype int64 is not float32"),
    (lambda x: (x * np.ones((4, 1), np.float32)).tanh(), np.ones((4, 3), np.float32),
     "broadcasts to (4, 3) along an axis other than the last"),
])
def test_programs_without_a_c_form_run_the_numpy_kernel(fn, x, reason):
    fast = compile(fn, passes=[fuse_elementwise])
    assert_close(fast(x), run(trace(fn, x), x), rtol=1e-6, atol=1e-6, what="numpy fallback")
    (kernel,) = fast.entry_for(x).kernels.values()
    assert kernel.language == "numpy"
    assert "numpy kernel, not C: " in fast.kernel_source() and reason in fast.kernel_source()


def two_step_program(unary, rows=3, cols=29):
    """``unary(x * b)`` for a row vector ``b``; each test that needs a module
    never loaded before in this process passes its own ``unary``."""
    program = FusedProgram(2, (("mul", (0, 1), ()), (unary, (2,), ())))
    metas = (TensorMeta((rows, cols), np.float32), TensorMeta((cols,), np.float32))
    return program, codegen.step_metas(program, metas)


def compiles_counted(monkeypatch):
    calls = []
    real = ckernel.compile_module
    monkeypatch.setattr(ckernel, "compile_module", lambda *a: calls.append(a) or real(*a))
    return calls


def test_the_disk_cache_is_used_and_a_corrupt_entry_rebuilt(tmp_path, monkeypatch):
    require_cc()
    monkeypatch.setenv(ckernel.CACHE_ENV, str(tmp_path))
    calls = compiles_counted(monkeypatch)
    program, slots = two_step_program("exp")
    first = ckernel.build(program, slots)
    second = ckernel.build(program, slots)
    other_shape = ckernel.build(*two_step_program("exp", rows=5, cols=7))
    assert len(calls) == 1 and len(list(tmp_path.glob("_course_kernel_*"))) == 1
    x, b = np.full((5, 7), 0.5, np.float32), np.full(7, 2.0, np.float32)
    assert_close(other_shape(np.empty_like(x), x, b), np.exp(x * b), rtol=2e-6, atol=0)
    assert first.source == second.source == other_shape.source  # sizes are arguments

    program, slots = two_step_program("log")  # never loaded: plant a corrupt file for it
    source = ckernel.c_source(program, slots)
    name = ckernel.module_name(source, ckernel.c_compiler())
    (tmp_path / f"{name}{ckernel.sysconfig.get_config_var('EXT_SUFFIX')}").write_bytes(b"junk")
    kernel = ckernel.build(program, slots)
    assert len(calls) == 2  # rebuilt, not crashed on
    x, b = np.full((3, 29), 0.5, np.float32), np.full(29, 2.0, np.float32)
    assert_close(kernel(np.empty_like(x), x, b), np.log(x * b), rtol=2e-6, atol=0)
    assert not list(tmp_path.glob(".build-*"))  # the private build folders are gone


def test_a_missing_compiler_warns_once_and_falls_back(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    monkeypatch.delenv(ckernel.REQUIRE_ENV, raising=False)
    x = np.linspace(-2, 2, 12).reshape(4, 3)
    fn = lambda x: (x * 2 + 1).tanh()  # noqa: E731
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for shape in ((4, 3), (2, 6)):  # two kernels, one warning
            graph = trace(fn, x.reshape(shape))
            fuse_elementwise(graph)
            assert [k.language for k in kernels_of(graph)] == ["numpy"]
            assert_close(run(graph, x.reshape(shape)), np.tanh(x.reshape(shape) * 2 + 1),
                         rtol=1e-12, atol=1e-12, what="numpy fallback")
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1
    assert "no C compiler was found" in messages[0] and "apt-get install gcc" in messages[0]


def test_a_compiler_that_fails_falls_back_too(monkeypatch):
    """A compiler that cannot run (as in a sandbox that forbids new processes)
    is reported and replaced by the numpy kernel, not raised."""
    monkeypatch.setenv("CC", shutil.which("false"))
    monkeypatch.delenv(ckernel.REQUIRE_ENV, raising=False)
    program, slots = two_step_program("abs")
    with pytest.warns(RuntimeWarning, match="compiling failed.*apt-get install gcc"):
        assert ckernel.build(program, slots) is None
    x = np.linspace(-1, 1, 87).reshape(3, 29).astype(np.float32)
    b = np.full(29, 2.0, np.float32)
    kernel = codegen.generate_kernel(program, tuple(slots[:2]))
    assert kernel.language == "numpy"
    assert_close(kernel(np.empty_like(x), x, b), np.abs(x * b), rtol=0, atol=0, what="fallback")


def test_without_cffi_the_numpy_kernel_runs(monkeypatch):
    monkeypatch.setattr(ckernel, "cffi", None)
    monkeypatch.delenv(ckernel.REQUIRE_ENV, raising=False)
    program, slots = two_step_program("neg")
    with pytest.warns(RuntimeWarning, match="cffi package is not installed: pip install cffi"):
        assert ckernel.build(program, slots) is None


def test_course_require_cc_makes_a_missing_compiler_an_error(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/bin/cc")
    monkeypatch.setenv(ckernel.REQUIRE_ENV, "1")
    program, slots = two_step_program("tanh")
    with pytest.raises(ckernel.CompilerMissingError,
                       match="no C compiler was found.*c-compiler.*COURSE_REQUIRE_CC=1 makes"):
        ckernel.build(program, slots)


def test_loading_a_kernel_leaves_subnormal_numbers_alone():
    """-ffast-math is a compile flag only: linked with it, GCC would add start-up
    code that flushes subnormals to zero in the whole process."""
    require_cc()
    program, slots = two_step_program("sqrt")
    assert ckernel.build(program, slots) is not None
    tiny = np.array([1e-39], np.float32)  # below float32's smallest normal, 1.2e-38
    assert (tiny * np.float32(0.5))[0] > 0
    assert torch.tensor([1e-39]).mul(0.5).item() > 0


def test_an_unwritable_kernel_cache_says_which_folder_and_how_to_move_it(tmp_path, monkeypatch):
    require_cc()
    monkeypatch.setenv(ckernel.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(ckernel.REQUIRE_ENV, raising=False)

    def read_only(*args):
        raise PermissionError(13, "Permission denied", str(tmp_path / "cache"))

    monkeypatch.setattr(ckernel, "compile_module", read_only)
    monkeypatch.setattr(ckernel, "warn_once", lambda message: warned.append(message))
    warned = []
    assert ckernel.build(*two_step_program("exp")) is None  # the numpy kernel runs instead
    assert len(warned) == 1 and str(tmp_path / "cache") in warned[0]
    assert ckernel.CACHE_ENV in warned[0] and "apt-get" not in warned[0]
