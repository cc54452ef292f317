"""torch's names the engines do not implement, each with the reason and what
to use instead. :func:`refuse` is what ``torch.<name>`` raises for them: a
``NotImplementedError`` (never a stand-in that would compute something else).

Only the names listed here are refused; any other unknown name is an ordinary
``AttributeError``, so ``hasattr`` and ``getattr(torch, name, default)`` keep
working for names torch does not have either.
"""

from __future__ import annotations

_NO_COMPLEX = ("the engines have no complex numbers; keep the real and imaginary parts "
               "as two float32 tensors")
_FLOAT8 = ("chapter 4 treats float8 as a number format, not a tensor dtype: "
           "chapters.amp.formats.quantize(x, 'float8_e4m3fn') rounds values to it")
_NO_DTYPE = ("the engines' integer dtypes are int8, int16, int32, int64, uint8 and bool; "
             "use int64 (torch.long) for indices and counts")
_QUANTIZED = "the engines have no quantized tensors; chapter 4 covers low-precision formats"

#: torch name -> why the engines refuse it and what to use instead
REFUSED: dict[str, str] = {
    **dict.fromkeys(["complex32", "complex64", "complex128", "chalf", "cfloat", "cdouble",
                     "view_as_real", "view_as_complex", "complex", "polar"], _NO_COMPLEX),
    **dict.fromkeys(["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                     "float8_e8m0fnu", "float4_e2m1fn_x2"], _FLOAT8),
    **dict.fromkeys(["uint16", "uint32", "uint64", "bit", "bits16", "bits1x8", "bits2x4",
                     "bits4x2", "bits8", *(f"int{k}" for k in range(1, 8)),
                     *(f"uint{k}" for k in range(1, 8))], _NO_DTYPE),
    **dict.fromkeys(["qint8", "qint32", "quint8", "quint4x2", "quint2x4", "quantization",
                     "ao", "quantize_per_tensor"], _QUANTIZED),
    "compile": ("the engines run eagerly; chapter 1's compiler is chapters.graph.compile, "
                "which traces a function over its own Values. Drop torch.compile(...): the "
                "uncompiled model computes the same values"),
    "jit": "no TorchScript in the engines; run the Python module itself",
    "fx": "chapters.graph.trace records a function as a graph (chapter 1), in place of torch.fx",
    "export": "the engines have no torch.export; chapters.graph.save stores a traced graph",
    "onnx": "the engines export no ONNX; chapters.graph.save stores a traced graph",
    "set_default_dtype": ("the engines' default floating dtype is always float32; pass "
                          "dtype= to each factory (torch.zeros(3, dtype=torch.float64))"),
    "sparse": "the engines have dense tensors only; use a dense tensor",
    "sparse_coo_tensor": "the engines have dense tensors only; use a dense tensor",
    "fft": "the engines have no FFTs; compute them in numpy outside the model",
    "distributions": ("the engines have no torch.distributions; draw with torch.normal / "
                      "torch.bernoulli / torch.multinomial and write the log-density"),
    "hub": "no downloads in the course; build the model from its code",
    "profiler": "chapters.autodiff.cost and chapter 1's memory planner measure the engines",
    "mps": "the engines compute with numpy on the CPU; use device='cpu'",
    "xpu": "the engines compute with numpy on the CPU; use device='cpu'",
    "nested": "the engines have no nested tensors; pad to one shape and mask",
    **dict.fromkeys(["get_rng_state", "set_rng_state", "initial_seed", "seed"],
                    "the engines draw from one numpy generator; restart it with "
                    "torch.manual_seed(seed)"),
    "vmap": "the engines have no vmap; loop over the batch, or batch the op itself",
}


def refuse(module: str, name: str):
    """The error for ``module.name`` if it is a refused name (else ``AttributeError``)."""
    if name in REFUSED:
        return NotImplementedError(f"{module}.{name} is not implemented by the course's "
                                   f"engines: {REFUSED[name]}.")
    return AttributeError(f"module {module!r} has no attribute {name!r}")
