"""C kernels (C 内核): a fused program compiled to one C loop.

:mod:`.codegen` writes each fused program as numpy calls over cache-sized
blocks. That removes temporaries and kernel launches, but every op is still
numpy's own loop, and one of them can cost more than all the rest together.
This module writes the program as **one C function**: one pass over the
output's elements, each step a C expression on values held in registers,
compiled by the system's C compiler through cffi (API mode:
``ffi.set_source`` + ``ffi.compile``). For chapter 1's GELU the kernel reads::

    void fused_kernel(float *out, const float *in0, ..., const float *in6,
                      long rows, long cols)
    {
        const float s2 = in2[0];  /* in2: scalar */
        ...                       /* s3 .. s6 likewise */
        for (long r = 0; r < rows; r++) {
    #pragma GCC ivdep
            for (long c = 0; c < cols; c++) {
                const long i = r * cols + c;
                const float t0 = in0[i] + in1[c];         /* step 0: add */
                const float t1 = s2 * t0;                 /* step 1: mul */
                const float t2 = powf(t0, s3);            /* step 2: pow */
                ...
                const float t7 = s6 + t6;                 /* step 7: add */
                out[i] = t1 * t7;                         /* step 8: mul */
            }
        }
    }

**Why a compiled loop, measured.** On the course's machine (an AMD EPYC,
one thread, 10^6 float32 elements, the GELU with its ``pow``): numpy's
separate passes take 63.8 ns per element, most of it in ``np.power``, whose
float32 loop on negative bases is scalar and slow (numpy's ``tanh`` is SIMD,
0.4 ns per element). The same expression as a C loop at ``-O2``, calling the
C library's scalar ``powf`` and ``tanhf``, takes 38.7 ns per element. At
``-O3 -ffast-math`` it takes 17.4 ns: GCC vectorises the loop and calls
glibc's vector math library (libmvec), which computes 4 ``powf`` or
``tanhf`` at once. ``-march=native`` lets it use the widest vector
instructions the CPU has (AVX2 there: 8 at once); in one later run on the
loaded machine the kernel took 22.8 ns per element with it, 33.2 ns without,
and numpy's passes 130 ns. After simplification (no ``pow`` left) the fused
kernel took 0.75 ns per element against 4.2 ns for numpy's separate passes.
So one pass over memory, no temporaries *and* vector math functions: that is
what makes fusion alone pay on this model.

**What ``-ffast-math`` allows, and why it is acceptable here.** It lets the
compiler assume that no value is NaN or infinite, reorder floating-point
sums and products as if they were associative, replace a division by a
multiplication by the reciprocal, ignore the sign of zero, and skip setting
``errno``; only under it does glibc declare its vector functions to GCC
(``-fno-finite-math-only`` alone loses the vectorisation: 41.8 ns per
element). The results therefore differ from eager's in the last bits (the
tests state the tolerances), and the contract on NaN and infinity is the
compiler's, not IEEE's. The tests check every op of :data:`C_TEMPLATES`
against eager and torch on NaN, infinite and signed-zero inputs; they agree
on which outputs are NaN or infinite and on the sign of zeros. Two kinds of
op needed care. On x86, GCC computes a float32 division or square root with
an approximate reciprocal, which turns ``x / inf`` and ``sqrt(inf)`` into
NaN; ``-mno-recip`` keeps the exact instructions. And ``maximum``,
``minimum`` and ``relu`` are not in the table: numpy's maximum propagates
NaN, the NaN test that would reproduce it (``a != a``) is exactly what
fast-math lets GCC delete, and the ``maxps`` instruction it emits instead
returns the second operand when either is NaN; those ops run in numpy.

Three precautions. The flags apply to compiling only, not to linking,
because GCC (12, here) links a ``-ffast-math`` shared library with start-up
code that flushes subnormal numbers to zero for the whole process, numpy's
and torch's too (chapter 4 needs them; a test checks they survive).
A scalar constant of the graph (``0.044715``, the ``3`` of ``h ** 3``) is a
kernel *argument*, not a literal, so the compiler cannot rewrite
``powf(h, 3.0f)`` into ``h * h * h``: that rewrite is the simplification
pass's job, and fusion alone must keep the ``pow`` it was given. And code
built with ``-march=native`` runs only on CPUs like this one, so the cache
key includes what ``-march=native`` resolves to.

**Layouts.** Each input is read according to how it broadcasts to the
output: ``full`` (as many elements as the output: ``in[i]``), ``row`` (the
output's last dimension only, such as a bias: ``in[c]``) or ``scalar``
(``in[0]``, read once before the loop). Any other layout (a column, a
middle axis), any dtype but float32 and float64, and any op without a
template leaves the program to the numpy kernel; :func:`why_not_c` says
why. The inner loop is marked ``ivdep``: no element depends on another, even
when the memory planner lets ``out`` be the same buffer as a ``full`` input.

**Compiling and caching.** A compile takes about a second, so the kernel is
not specialised to sizes: the output's rows and columns are arguments, and
one compiled kernel serves every shape with the same program, dtype and
input layouts. Compiled modules are cached on disk, keyed by a hash of the
source, the flags, the compiler's version and the target it resolves, in
``$COURSE_KERNEL_CACHE`` (default ``~/.cache/dl-internals/kernels``). A
module is built in a private temporary folder and renamed into place, so
concurrent processes never load a half-written file; a cached file that
does not load is rebuilt. Without a C compiler the numpy kernel runs, after
one warning that says how to install one; with ``COURSE_REQUIRE_CC=1`` (as
in CI) a missing compiler is an error instead.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

try:
    import cffi
except ImportError:  # an environment installed before cffi was a dependency: numpy kernels
    cffi = None

from chapters.envcheck import c_compiler_command

from .ops import TensorMeta

# compile only, not link (see the module docstring). On x86: use this CPU's widest vector
# instructions, and divide and take float32 square roots exactly (GCC would otherwise use
# approximate reciprocals, which give NaN for x / inf and sqrt(inf))
COMPILE_FLAGS = ("-O3", "-ffast-math") + (
    ("-march=native", "-mno-recip") if platform.machine().lower() in ("x86_64", "amd64") else ())
CACHE_ENV, REQUIRE_ENV = "COURSE_KERNEL_CACHE", "COURSE_REQUIRE_CC"
C_TYPES = {np.dtype(np.float32): ("float", "f"), np.dtype(np.float64): ("double", "")}

# op -> its C expression; {0}, {1}: operands, {f}: the float suffix of math.h's functions
C_TEMPLATES = {
    "add": "{0} + {1}",
    "sub": "{0} - {1}",
    "mul": "{0} * {1}",
    "div": "{0} / {1}",
    "pow": "pow{f}({0}, {1})",
    "neg": "-{0}",
    "abs": "fabs{f}({0})",
    "exp": "exp{f}({0})",
    "log": "log{f}({0})",
    "sqrt": "sqrt{f}({0})",
    "tanh": "tanh{f}({0})",
}


class CompilerMissingError(RuntimeError):
    """No usable C compiler, and ``COURSE_REQUIRE_CC=1`` forbids the numpy fallback."""


def layout(meta: TensorMeta, out: TensorMeta) -> str | None:
    """How an input broadcasts to the output: ``"full"``, ``"row"`` (the
    output's last dimension), ``"scalar"``, or ``None`` for any other layout."""
    if meta.numel == 1:
        return "scalar"
    if meta.numel == out.numel:
        return "full"
    significant = meta.shape[next((k for k, s in enumerate(meta.shape) if s != 1),
                                  len(meta.shape)):]
    return "row" if out.shape and significant == out.shape[-1:] else None


def why_not_c(program, slots: list[TensorMeta]) -> str | None:
    """Why ``program`` (with the metas of all its slots) cannot be a C kernel,
    or ``None`` when it can."""
    out = slots[-1]
    if out.dtype not in C_TYPES:
        return f"its dtype {out.dtype} is not float32 or float64"
    for k, (op, _, _) in enumerate(program.steps):
        if op not in C_TEMPLATES:
            return f"step {k} ({op}) has no C template"
    for i, meta in enumerate(slots[:program.n_inputs]):
        if meta.dtype != out.dtype:
            return f"input in{i} is {meta.dtype}, the output {out.dtype}"
        if layout(meta, out) is None:
            return (f"input in{i} of shape {meta.shape} broadcasts to {out.shape} along an "
                    "axis other than the last")
    return None


def read_input(i: int, kind: str) -> str:
    """The C expression that reads input ``i`` inside the loop."""
    return {"full": f"in{i}[i]", "row": f"in{i}[c]", "scalar": f"s{i}"}[kind]


def signature(name: str, params: list[str], width: int = 92) -> str:
    """``void name(params)``, wrapped between parameters to ``width`` columns."""
    lines, indent = [f"void {name}("], " " * (len(name) + 6)
    for k, param in enumerate(params):
        text = param + (", " if k < len(params) - 1 else ")")
        if len(lines[-1]) + len(text.rstrip()) > width:
            lines[-1] = lines[-1].rstrip()
            lines.append(indent)
        lines[-1] += text
    return "\n".join(lines)


def c_source(program, slots: list[TensorMeta], name: str = "fused_kernel") -> str:
    """The C source of ``program`` for the metas ``slots`` (inputs, then steps).
    It depends on the shapes only through the inputs' layouts: the sizes are
    arguments, so one compiled kernel serves every batch size."""
    out = slots[-1]
    ctype, suffix = C_TYPES[out.dtype]
    kinds = [layout(m, out) for m in slots[:program.n_inputs]]
    params = ([f"{ctype} *out"] + [f"const {ctype} *in{i}" for i in range(len(kinds))]
              + ["long rows", "long cols"])
    listed = ", ".join(f"in{i} {kind}" for i, kind in enumerate(kinds))
    lines = [f"/* {len(program.steps)} elementwise ops on {out.dtype}, one pass over rows x cols "
             "elements", f"   inputs: {listed} */",
             signature(name, params), "{"]
    lines += [f"    const {ctype} s{i} = in{i}[0];  /* in{i}: scalar */"
              for i, kind in enumerate(kinds) if kind == "scalar"]
    lines += ["    for (long r = 0; r < rows; r++) {",
              "#pragma GCC ivdep",
              "        for (long c = 0; c < cols; c++) {",
              "            const long i = r * cols + c;"]
    names = [read_input(i, kind) for i, kind in enumerate(kinds)]
    for k, (op, args, _) in enumerate(program.steps):
        expression = C_TEMPLATES[op].format(*(names[a] for a in args), f=suffix)
        target = "out[i]" if k == len(program.steps) - 1 else f"const {ctype} t{k}"
        statement = f"{target} = {expression};"
        lines.append(f"            {statement:<40s}  /* step {k}: {op} */")
        names.append(f"t{k}")
    lines += ["        }", "    }", "}"]
    return "\n".join(lines) + "\n"


def c_compiler() -> str | None:
    """The path of the C compiler cffi will call (``$CC``, else the one Python
    was built with), or ``None`` when it is not installed."""
    return shutil.which(shlex.split(c_compiler_command())[0])


@functools.cache
def compiler_identity(path: str) -> str:
    """The compiler's first ``--version`` line and, where the compiler can
    print them (GCC), the target options ``COMPILE_FLAGS`` resolve to on this
    machine (what ``-march=native`` means here). Part of the cache key, so a
    cache shared by two kinds of CPU never hands one the other's code."""
    version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                             check=True).stdout.partition("\n")[0]
    target = subprocess.run([path, *COMPILE_FLAGS, "-Q", "--help=target"], capture_output=True,
                            text=True, timeout=30, check=False).stdout
    return version + "\n" + target


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$COURSE_KERNEL_CACHE`` or
    ``~/.cache/dl-internals/kernels``."""
    default = Path.home() / ".cache" / "dl-internals" / "kernels"
    return Path(os.environ.get(CACHE_ENV) or default)


def module_name(source: str, compiler: str) -> str:
    """A module name unique to the source, flags, compiler and target CPU."""
    key = "\n".join([source, " ".join(COMPILE_FLAGS), compiler_identity(compiler),
                     cffi.__version__, sysconfig.get_config_var("EXT_SUFFIX") or ""])
    return "_course_kernel_" + hashlib.sha256(key.encode()).hexdigest()[:20]


def load_module(name: str, path: Path):
    """Import the compiled extension module at ``path``."""
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def compile_module(name: str, source: str, declaration: str, path: Path) -> None:
    """Compile ``source`` with cffi into ``path``: built in a private temporary
    folder next to it, then renamed into place (atomic on one file system)."""
    ffi = cffi.FFI()
    ffi.cdef(declaration)
    ffi.set_source(name, "#include <math.h>\n" + source,
                   extra_compile_args=list(COMPILE_FLAGS), libraries=["m"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".build-") as build:
        built = ffi.compile(tmpdir=build, verbose=False)
        os.replace(built, path)


def cached_module(source: str, declaration: str, compiler: str):
    """The compiled module of ``source``: from the disk cache when a loadable
    one is there, else compiled now (and cached)."""
    name = module_name(source, compiler)
    path = cache_dir() / f"{name}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    if path.exists():
        try:
            return load_module(name, path)
        except ImportError:  # a truncated or foreign file: build it again
            path.unlink(missing_ok=True)
    compile_module(name, source, declaration, path)
    return load_module(name, path)


@functools.cache
def warn_once(message: str) -> None:
    """Warn about the fallback once per process, not once per kernel."""
    warnings.warn(message, RuntimeWarning, stacklevel=3)


INSTALL_A_COMPILER = ("Install a C compiler (Debian/Ubuntu: sudo apt-get install gcc libc6-dev; "
                      "conda: conda install -c conda-forge c-compiler) and restart the kernel.")


def unavailable(reason: str, fix: str = INSTALL_A_COMPILER) -> None:
    """A C kernel could not be built: an error under ``COURSE_REQUIRE_CC=1``,
    else one warning, and the caller uses the numpy kernel."""
    message = (f"C kernels are unavailable ({reason}); fused programs run as generated "
               f"numpy code instead, which is slower. {fix}")
    if os.environ.get(REQUIRE_ENV) == "1":
        raise CompilerMissingError(f"{message} ({REQUIRE_ENV}=1 makes this an error)")
    warn_once(message)


@dataclass(frozen=True)
class CKernel:
    """A fused program compiled to C: ``kernel(out, *inputs)`` writes the
    program's result into ``out``. ``language`` tells it from the numpy kernel."""

    source: str
    fn: object
    ffi: cffi.FFI
    out_meta: TensorMeta
    language: str = "C"

    def pointer(self, array: np.ndarray):
        """A C pointer to ``array``'s data (copied first if it is not contiguous
        or not of the kernel's dtype)."""
        ctype = C_TYPES[self.out_meta.dtype][0]
        return self.ffi.from_buffer(f"{ctype}[]",
                                    np.ascontiguousarray(array, dtype=self.out_meta.dtype))

    @property
    def rows_cols(self) -> tuple[int, int]:
        """The output as ``rows x cols``: its last dimension, and all the others."""
        shape = self.out_meta.shape
        cols = shape[-1] if shape else 1
        return (self.out_meta.numel // cols if cols else 0), cols

    def __call__(self, out: np.ndarray, *inputs: np.ndarray) -> np.ndarray:
        direct = out.flags.c_contiguous and out.flags.writeable and out.dtype == self.out_meta.dtype
        target = out if direct else np.empty(self.out_meta.shape, self.out_meta.dtype)
        self.fn(self.pointer(target), *(self.pointer(a) for a in inputs), *self.rows_cols)
        if target is not out:
            out[...] = target
        return out


def build(program, slots: list[TensorMeta]) -> CKernel | None:
    """Compile ``program`` (metas of all slots given) to a :class:`CKernel`, or
    ``None`` when it has no C form (:func:`why_not_c`) or no compiler works."""
    if why_not_c(program, slots) is not None:
        return None
    if cffi is None:
        unavailable("the cffi package is not installed: pip install cffi")
        return None
    compiler = c_compiler()
    if compiler is None:
        unavailable("no C compiler was found on the PATH")
        return None
    source = c_source(program, slots)
    declaration = source[source.index("void "):source.index("{")].strip() + ";"
    try:
        module = cached_module(source, declaration, compiler)
    except PermissionError as error:
        unavailable(f"the kernel cache {cache_dir()} is not writable: {error}",
                    f"Set {CACHE_ENV} to a folder you can write to and restart the kernel.")
        return None
    except (OSError, subprocess.SubprocessError, cffi.VerificationError) as error:
        unavailable(f"compiling failed: {error}")
        return None
    return CKernel(source, module.lib.fused_kernel, module.ffi, slots[-1])
