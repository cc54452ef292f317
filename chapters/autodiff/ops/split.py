"""Cutting a tensor into views: chunk, split, tensor_split, unbind, narrow,
unflatten, movedim (moveaxis).

None of these computes a value or needs a rule of its own. Each piece is a
basic-indexing ``getitem`` (a slice, or one integer for unbind), unflatten is
a ``reshape`` and movedim a ``permute``, and those ops already return views
and carry their adjoints: a slice's gradient is g written back into zeros at
the slice, so when several pieces are used at once their gradients land side
by side in the input's gradient. As in torch, every result is a view: it
shares memory and the version counter with its input, so an in-place write
through a piece shows in the base (and the other way round).

The sizes follow torch's rules. For a dim of size n:

* ``split(s)``: pieces of s, the last one n mod s (one empty piece when n = 0);
* ``chunk(c)``: ``split(ceil(n / c))``, so there may be fewer than c pieces;
* ``tensor_split(c)``: exactly c pieces, the first n mod c of them one longer;
* ``tensor_split([i_1, ..., i_k])``: the Python slices [0:i_1], [i_1:i_2], ...,
  [i_k:] (negative indices count from the end, out-of-order ones give empty
  pieces).
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import check_dim

from ..dispatch import public
from ..tensor import Tensor, tensor_method


def _dim_of_cut(op: str, x: Tensor, dim: int) -> int:
    """``dim`` as a non-negative axis of x, which must have one to cut along."""
    if x.ndim == 0:
        raise RuntimeError(f"{op} expects at least a 1-dimensional tensor, got a 0-d one; "
                           "reshape it first, e.g. x.reshape(1).")
    return check_dim(op, dim, x.ndim)


def _piece(x: Tensor, dim: int, start: int | None, stop: int | None) -> Tensor:
    """x[..., start:stop, ...] at position ``dim``: a view (basic indexing)."""
    return x[(slice(None),) * dim + (slice(start, stop),)]


def _pieces(x: Tensor, dim: int, sizes) -> tuple:
    """Consecutive views of the given ``sizes`` along ``dim``."""
    bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).tolist()
    return tuple(_piece(x, dim, a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True))


def _even_sizes(op: str, n: int, size: int) -> list[int]:
    """Pieces of ``size`` covering n, the last one shorter; one piece if n = 0."""
    if size < 0:
        raise RuntimeError(f"{op} expects split_size be non-negative, but got "
                           f"split_size={size}.")
    if size == 0:
        if n:
            raise RuntimeError(f"{op}: split_size can only be 0 if dimension size is 0, but "
                               f"got dimension size of {n}; give a positive size.")
        return [0]
    return [size] * (n // size) + ([n % size] if n % size or not n else [])


def _listed_sizes(n: int, sizes) -> list[int]:
    if not isinstance(sizes, list | tuple):
        raise TypeError(f"split(): split_size must be an int or a list of ints, got "
                        f"{type(sizes).__name__} {sizes!r}.")
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={sizes}.")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (the "
                           f"input's size along the dim), but got split_sizes={sizes}.")
    return sizes


@tensor_method()
@public("split")
def split(tensor, split_size_or_sections=None, dim: int = 0, *, split_size=None):
    """torch.split: views of ``split_size_or_sections`` elements along ``dim``
    (an int: equal pieces, the last one shorter; a list: those sizes, which
    must add up to the dim's size). ``split_size`` is the name Tensor.split
    gives the same argument."""
    size = split_size if split_size_or_sections is None else split_size_or_sections
    d = _dim_of_cut("split", tensor, dim)
    n = tensor.shape[d]
    if isinstance(size, int | np.integer):
        return _pieces(tensor, d, _even_sizes("split", n, int(size)))
    return _pieces(tensor, d, _listed_sizes(n, size))


@tensor_method()
@public("chunk")
def chunk(input, chunks: int, dim: int = 0):
    """torch.chunk: at most ``chunks`` views of ceil(n / chunks) elements each
    along ``dim``; a dim of size 0 gives ``chunks`` empty views."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}; "
                           "ask for at least one chunk.")
    d = _dim_of_cut("chunk", input, dim)
    n = input.shape[d]
    if n == 0:
        return _pieces(input, d, [0] * chunks)
    return _pieces(input, d, _even_sizes("chunk", n, -(-n // chunks)))


def _sections_or_indices(arg):
    """tensor_split's second argument as an int (sections) or a list (indices)."""
    if not isinstance(arg, Tensor):
        return int(arg) if isinstance(arg, int | np.integer) else [int(i) for i in arg]
    if arg.dtype != np.int64:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                           f"of long (int64), but got {arg.dtype}; convert it with .long().")
    if arg.ndim > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                           "zero-dimensional or one-dimensional tensor, but got a tensor "
                           f"with {arg.ndim} dims.")
    return int(arg.data) if arg.ndim == 0 else arg.data.tolist()


@tensor_method()
@public("tensor_split")
def tensor_split(input, indices_or_sections=None, dim: int = 0, *, sections=None,
                 indices=None):
    """torch.tensor_split: an int c (or ``sections=c``) gives exactly c views
    along ``dim``, the first n mod c of them one element longer; a list (or
    a 1-d int64 tensor, or ``indices=``) of indices cuts before each of them,
    Python-slice style."""
    d = _dim_of_cut("tensor_split", input, dim)
    n = input.shape[d]
    given = [a for a in (indices_or_sections, sections, indices) if a is not None]
    if len(given) != 1:
        raise TypeError("tensor_split() takes one of indices_or_sections, sections or "
                        f"indices, got {len(given)} of them.")
    cut = _sections_or_indices(given[0])
    if isinstance(cut, int):
        if cut <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, "
                               f"got {cut}.")
        return _pieces(input, d, [n // cut + (k < n % cut) for k in range(cut)])
    bounds = [None, *cut, None]
    return tuple(_piece(input, d, a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True))


@tensor_method()
@public("unbind")
def unbind(input, dim: int = 0):
    """torch.unbind: the n slices x[..., i, ...] along ``dim`` (each a view
    with that dim removed), as a tuple."""
    if input.ndim == 0:
        raise IndexError("unbind: Dimension specified as 0 but tensor has no dimensions; "
                         "a 0-d tensor has nothing to unbind.")
    d = check_dim("unbind", dim, input.ndim)
    return tuple(input[(slice(None),) * d + (i,)] for i in range(input.shape[d]))


def _start(start, n: int) -> int:
    """narrow's start (an int or a 0-d integer tensor) in [0, n]."""
    if isinstance(start, Tensor):
        if start.ndim or start.dtype.kind not in "iu":
            raise RuntimeError(f"narrow(): start must be an int or a 0-d integer tensor, got "
                               f"a {start.dtype} tensor of shape {list(start.shape)}; "
                               "use int(start).")
        start = int(start.data)
    if not isinstance(start, int | np.integer):
        raise TypeError(f"narrow(): start must be an int, got {type(start).__name__} "
                        f"{start!r}; use int(start).")
    if not -n <= start <= n:
        raise IndexError(f"narrow(): start out of range (expected to be in range of [{-n}, {n}]"
                         f", but got {start}).")
    return int(start) % n if n and start < 0 else int(start)


@tensor_method()
@public("narrow")
def narrow(input, dim: int, start, length: int):
    """torch.narrow: the view x[..., start:start + length, ...] along ``dim``
    (a negative start counts from the end)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor; reshape it first.")
    d = check_dim("narrow", dim, input.ndim)
    n = input.shape[d]
    begin = _start(start, n)
    if length < 0:
        raise RuntimeError(f"narrow(): length must be non-negative, got {length}.")
    if begin + length > n:
        raise RuntimeError(f"narrow(): start ({begin}) + length ({length}) exceeds dimension "
                           f"size ({n}); shorten the length.")
    return _piece(input, d, begin, begin + length)


def _unflattened(n: int, sizes: list[int]) -> list[int]:
    """``sizes`` with a -1 inferred, checked to multiply up to n."""
    if sizes.count(-1) > 1:
        raise RuntimeError(f"unflatten: only one dimension can be inferred (-1), got sizes "
                           f"{sizes}.")
    known = int(np.prod([s for s in sizes if s != -1]))
    if -1 in sizes:
        if known == 0:
            raise RuntimeError(f"unflatten: cannot infer the -1 in sizes {sizes} when the "
                               "other sizes multiply to 0; give every size.")
        sizes = [n // known if s == -1 else s for s in sizes]
    if int(np.prod(sizes)) != n:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size "
                           f"of the dim ({n}) in the input tensor.")
    return sizes


@tensor_method()
@public("unflatten")
def unflatten(input, dim: int, sizes):
    """torch.unflatten: split dim ``dim`` into ``sizes`` (one may be -1), a
    ``reshape`` (a view), flatten's inverse."""
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty; give at least one size.")
    if input.ndim == 0:
        raise RuntimeError("unflatten: a 0-d tensor has no dimension to unflatten; reshape "
                           "it to 1-d first.")
    d = check_dim("unflatten", dim, input.ndim)
    shape = list(input.shape)
    return input.reshape(shape[:d] + _unflattened(shape[d], sizes) + shape[d + 1:])


def _dim_list(op: str, dims, ndim: int) -> list[int]:
    dims = [dims] if isinstance(dims, int | np.integer) else list(dims)
    out = [check_dim(op, d, ndim) for d in dims]
    if len(set(out)) != len(out):
        raise RuntimeError(f"{op}: repeated dim in {dims}; name each dim once.")
    return out


@tensor_method("moveaxis")
@public("movedim")
def movedim(input, source, destination):
    """torch.movedim: dims ``source`` moved to positions ``destination``, the
    others kept in order: a ``permute`` (a view) by the order built by
    placing each source dim at its destination among the remaining ones."""
    src = _dim_list("movedim", source, input.ndim)
    dst = _dim_list("movedim", destination, input.ndim)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src}) "
                           f"should contain the same number of dims as destination ({dst}).")
    if input.ndim == 0:  # a 0-d tensor accepts dim 0 (or -1) and has nothing to move
        return input.permute()
    order = [k for k in range(input.ndim) if k not in src]
    for to, frm in sorted(zip(dst, src, strict=True)):
        order.insert(to, frm)
    return input.permute(*order)


moveaxis = movedim
