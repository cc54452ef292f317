"""Generated numpy kernels (the fallback of the C kernels, which
test_ckernel.py tests): they agree with eager and torch, handle blocks,
broadcasting and aliasing, keep their temporaries block-sized, and programs
that cannot be generated fall back to the blocked interpreter."""

import tracemalloc

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import chapters.graph.fused as fused_module
from chapters.graph import Graph, codegen, compile, run, run_eager, trace
from chapters.graph.fused import run_blocked, run_fused_into
from chapters.graph.passes import fuse_elementwise
from chapters.torchcheck import assert_close

FORWARD_RTOL, FORWARD_ATOL = 1e-6, 1e-6  # float32 values of order 1; no gradients in chapter 1


def gelu_mlp(x, w1, b1, w2):
    h = x @ w1 + b1
    return (0.5 * h * (1 + (0.7978845608 * (h + 0.044715 * h ** 3)).tanh())) @ w2


def mlp_inputs(batch=37, d=8, hidden=24, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32)
            for s in ((batch, d), (d, hidden), (hidden,), (hidden, 5))]


@pytest.fixture(autouse=True, scope="module")
def numpy_kernels():
    """Every test here runs the numpy kernels, not the C ones."""
    codegen.generate_kernel.cache_clear()
    with codegen.kernels_in("numpy"):
        yield
    codegen.generate_kernel.cache_clear()


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few rows, so every kernel loops and has a shorter last block."""
    monkeypatch.setattr(codegen, "BLOCK_ELEMENTS", 48)
    codegen.generate_kernel.cache_clear()
    yield
    codegen.generate_kernel.cache_clear()


def fused_node(graph):
    (node,) = [n for n in graph.topological_order() if n.op == "fused"]
    return node


def test_compiled_kernels_agree_with_eager_and_torch(small_blocks, monkeypatch):
    def interpreter_must_not_run(*_):
        raise AssertionError("the blocked interpreter ran instead of the generated kernel")

    monkeypatch.setattr(fused_module, "run_blocked", interpreter_must_not_run)
    inputs = mlp_inputs()
    fast = compile(gelu_mlp)
    ours = fast(*inputs)
    assert fast.entry_for(*inputs).kernels and all(fast.entry_for(*inputs).kernels.values())
    eager = run_eager(gelu_mlp, *inputs).outputs
    assert_close(ours, eager, rtol=FORWARD_RTOL, atol=FORWARD_ATOL,
                 what="all passes and generated kernels vs eager")
    fusion_only = compile(gelu_mlp, passes=[fuse_elementwise])
    assert_close(fusion_only(*inputs), eager, rtol=1e-7, atol=1e-7,
                 what="fusion alone (same ufuncs, same order) vs eager")
    with torch.no_grad():
        expected = gelu_mlp(*(torch.from_numpy(a) for a in inputs))
    assert_close(ours, expected, rtol=1e-5, atol=1e-5, what="generated kernel vs torch")


def test_kernel_source_shows_the_generated_function():
    fast = compile(gelu_mlp)
    with pytest.raises(RuntimeError, match="has not been compiled yet: call it once"):
        fast.kernel_source()
    fast(*mlp_inputs())
    source = fast.kernel_source()
    assert "def fused_kernel(out," in source and "np.tanh(" in source and "out=o)" in source
    assert "#   in0 = matmul_" in source
    assert fast.kernel_source(*mlp_inputs(batch=3)) != source  # another signature, other blocks


def test_scratch_buffers_are_reused_and_block_sized(small_blocks):
    inputs = mlp_inputs()
    graph = trace(gelu_mlp, *inputs)
    fuse_elementwise(graph)
    node = fused_node(graph)
    program, metas = node.attrs["program"], tuple(i.meta for i in node.inputs)
    kernel = codegen.kernel_for(program, metas)
    # independent count: the most step results alive at once just after a step
    # (a result may take over the buffer of an operand that dies at its step;
    # the last step writes into the output, not into scratch)
    last = {a: k for k, (_, args, _) in enumerate(program.steps) for a in args}
    alive_after = [sum(last.get(program.n_inputs + j, -1) > k for j in range(k + 1))
                   for k in range(len(program.steps) - 1)]
    scratch = kernel.source.count("np.empty(")
    assert scratch == max(alive_after) == 3  # h, 0.5 * h and the running inner term
    assert scratch < len(program.steps) - 1  # fewer buffers than temporaries
    assert f"np.empty(({kernel.block_rows}, 24)" in kernel.source
    assert kernel.block_rows == 48 // 24 and "the last block is shorter" in kernel.source


def test_the_kernel_allocates_no_full_size_temporary():
    x = np.random.default_rng(0).standard_normal((512, 256)).astype(np.float32)
    graph = trace(lambda x: 0.5 * x * (1 + (0.79788 * (x + 0.044715 * x * x * x)).tanh()), x)
    fuse_elementwise(graph)
    node = fused_node(graph)
    arrays = [x if n.op == "placeholder" else n.attrs["value"] for n in node.inputs]
    out = np.empty_like(x)
    run_fused_into(out, arrays, node.attrs["program"])  # generate outside the measurement
    tracemalloc.start()
    try:
        run_fused_into(out, arrays, node.attrs["program"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    block_bytes = codegen.BLOCK_ELEMENTS * 4
    assert peak <= 4 * block_bytes < x.nbytes  # a few block-sized scratch buffers, no more
    assert_close(out, run(trace(lambda x: 0.5 * x * (1 + (0.79788 * (
        x + 0.044715 * x * x * x)).tanh()), x), x), rtol=FORWARD_RTOL, atol=FORWARD_ATOL)


def test_output_may_alias_an_input_that_dies_here(small_blocks):
    """The planned executor may write a fused node over an input of the same shape."""
    rng = np.random.default_rng(1)
    x, b = rng.standard_normal((9, 5)), rng.standard_normal(5)
    graph = trace(lambda x, b: ((x + b) * x).tanh() - x, x, b)
    expected = run(graph, x, b)
    fuse_elementwise(graph)
    buffer = x.copy()
    run_fused_into(buffer, [buffer, b], fused_node(graph).attrs["program"])
    assert_close(buffer, expected, rtol=1e-12, atol=1e-12, what="in-place fused kernel")


@pytest.mark.parametrize("fn, reason", [
    (lambda x: ((x * 2).sigmoid() + 1).tanh(), "step 1 (sigmoid) has no code template"),
    (lambda x: ((x * 2).exp() + 1).tanh(), "mixes dtypes"),
])
def test_programs_that_cannot_be_generated_fall_back_to_the_interpreter(fn, reason,
                                                                         small_blocks):
    x = np.arange(-6, 6).reshape(4, 3)
    if reason.startswith("step"):
        x = x.astype(np.float32) / 4
    expected = run(trace(fn, x), x)
    fast = compile(fn)
    assert_close(fast(x), expected, rtol=1e-6, atol=1e-6, what="fallback")
    (kernel,) = fast.entry_for(x).kernels.values()
    assert kernel is None
    assert reason in fast.kernel_source() and "blocked interpreter" in fast.kernel_source()


def test_a_scalar_program_runs_without_a_loop():
    x = np.float32(0.3)
    fn = lambda x: (x * 2 + 1).tanh()  # noqa: E731
    graph = trace(fn, x)
    fuse_elementwise(graph)
    node = fused_node(graph)
    kernel = codegen.kernel_for(node.attrs["program"], tuple(i.meta for i in node.inputs))
    assert "for start" not in kernel.source
    assert_close(run(graph, x), np.tanh(np.float32(0.3) * 2 + 1), rtol=1e-6, atol=0)


SHAPES = [(7, 3), (3,), (1, 3), (7, 1), ()]
OPS = ["add", "sub", "mul", "maximum", "minimum", "tanh", "neg", "abs", "relu", "exp"]


@settings(max_examples=60, deadline=None)
@given(shapes=st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3),
       ops=st.lists(st.sampled_from(OPS), min_size=2, max_size=8),
       picks=st.lists(st.integers(0, 100), min_size=16, max_size=16),
       transpose=st.booleans())
def test_generated_kernels_equal_the_interpreter(shapes, ops, picks, transpose):
    """Random elementwise chains over broadcast (and transposed) inputs: the
    generated kernel, the blocked interpreter and the unfused graph agree."""
    saved, codegen.BLOCK_ELEMENTS = codegen.BLOCK_ELEMENTS, 6  # two rows of 3 per block
    try:
        check_chain(shapes, ops, picks, transpose)
    finally:
        codegen.BLOCK_ELEMENTS = saved
        codegen.generate_kernel.cache_clear()


def check_chain(shapes, ops, picks, transpose):
    codegen.generate_kernel.cache_clear()
    rng = np.random.default_rng(picks[0])
    arrays = [rng.standard_normal(s) for s in shapes]
    if transpose and arrays[0].ndim == 2:
        arrays[0] = np.ascontiguousarray(arrays[0].T).T  # a non-contiguous input
    values = list(arrays)
    graph = Graph("chain")
    nodes = [graph.placeholder(f"x{i}", a.shape, a.dtype) for i, a in enumerate(arrays)]
    for k, op in enumerate(ops):
        a = nodes[-1] if k else nodes[picks[k] % len(nodes)]
        if op in ("tanh", "neg", "abs", "relu", "exp"):
            nodes.append(graph.call(op, graph.call("tanh", a) if op == "exp" else a))
        else:
            nodes.append(graph.call(op, a, nodes[picks[k + 1] % len(nodes)]))
    graph.set_outputs(nodes[-1])
    expected = run(graph, *values)
    fuse_elementwise(graph, min_ops=1)
    fused = [n for n in graph.topological_order() if n.op == "fused"]
    for node in fused:
        assert codegen.kernel_for(node.attrs["program"],
                                  tuple(i.meta for i in node.inputs)) is not None
    assert_close(run(graph, *values), expected, rtol=1e-12, atol=1e-12, what="generated")
    if fused and fused[-1] is graph.outputs[0]:
        node = fused[-1]
        env = run(graph, *values, keep_all=True)
        blocked = run_blocked(np.empty(node.shape, node.dtype),
                              [env[i.name] for i in node.inputs], node.attrs["program"])
        assert_close(blocked, expected, rtol=1e-12, atol=1e-12, what="blocked interpreter")
        # as the planned executor may: write the result over an input of the same meta
        arrays = [env[i.name] for i in node.inputs]
        for k, inp in enumerate(node.inputs):
            if inp.meta == node.meta:
                aliased = [a.copy() for a in arrays]
                run_fused_into(aliased[k], aliased, node.attrs["program"])
                assert_close(aliased[k], expected, rtol=1e-12, atol=1e-12, what="in place")
