"""Random graphs for property tests: hypothesis draws a small program of
elementwise ops, reductions, matmuls and constants (including 0, 1, 2, 3 and
repeated subexpressions, so every pass has something to do)."""

import numpy as np
from hypothesis import strategies as st

from chapters.graph import Graph

B, N = 4, 3
INPUT_SHAPES = [(B, N), (N,), (1, N), (B, 1)]
UNARY = ["neg", "tanh", "sigmoid", "relu", "abs", "exp"]
BINARY = ["add", "sub", "mul", "maximum", "minimum"]


@st.composite
def random_graphs(draw, max_steps=14):
    """``(graph, inputs)``: a float64 graph and matching input arrays."""
    g = Graph("random")
    n_inputs = draw(st.integers(1, 3))
    shapes = [draw(st.sampled_from(INPUT_SHAPES)) for _ in range(n_inputs)]
    nodes = [g.placeholder(f"x{i}", s, np.float64) for i, s in enumerate(shapes)]
    for _ in range(draw(st.integers(1, max_steps))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "const", "pow", "dup",
                                     "reduce", "where", "matmul", "foldable"]))
        a = draw(st.sampled_from(nodes))
        if kind == "unary":
            op = draw(st.sampled_from(UNARY))
            new = g.call(op, g.call("tanh", a) if op == "exp" else a)
        elif kind == "binary":
            new = g.call(draw(st.sampled_from(BINARY)), a, draw(st.sampled_from(nodes)))
        elif kind == "const":
            c = g.constant(np.float64(draw(st.sampled_from([0.0, 1.0, 2.0, -0.5]))))
            op = draw(st.sampled_from(["add", "mul", "sub"]))
            new = g.call(op, *draw(st.sampled_from([(a, c), (c, a)])))
        elif kind == "pow":
            new = g.call("pow", g.call("tanh", a),
                         g.constant(np.float64(draw(st.sampled_from([1.0, 2.0, 3.0])))))
        elif kind == "dup":  # the same expression twice: food for CSE
            b = draw(st.sampled_from(nodes))
            new = g.call("add", g.call("mul", a, b), g.call("mul", a, b))
        elif kind == "reduce":
            new = g.call("sum", a, dim=-1, keepdim=True) if len(a.shape) == 2 else \
                g.call("mean", a, dim=0, keepdim=True)
        elif kind == "where":
            b = draw(st.sampled_from(nodes))
            new = g.call("where", g.call("gt", a, b), a, b)
        elif kind == "matmul" and len(a.shape) == 2 and a.shape[1] == N:
            w = g.constant(np.linspace(-1, 1, N * N).reshape(N, N))
            new = g.call("matmul", a, w)
        else:  # a subexpression of constants only: food for folding
            c1, c2 = g.constant(np.float64(1.5)), g.constant(np.arange(N, dtype=np.float64))
            new = g.call("add", a, g.call("mul", c1, g.call("exp", c2)))
        nodes.append(new)
    outputs = draw(st.lists(st.sampled_from(nodes[n_inputs:]), min_size=1, max_size=2,
                            unique_by=id))
    g.set_outputs(*outputs)
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    strided = draw(st.lists(st.booleans(), min_size=n_inputs, max_size=n_inputs))
    arrays = [non_contiguous(rng, s) if bent else rng.standard_normal(s)
              for s, bent in zip(shapes, strided, strict=True)]
    return g, arrays


def non_contiguous(rng, shape):
    """An array of ``shape`` that is a strided view (every other element of a
    bigger one, reversed), so kernels and buffers see non-contiguous inputs."""
    if not shape:
        return rng.standard_normal(())
    big = rng.standard_normal(shape[:-1] + (2 * shape[-1],))
    view = big[..., ::-2]
    assert view.shape == shape and not view.flags.c_contiguous
    return view
