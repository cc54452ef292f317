"""Collective communication (集合通信), written from scratch on point-to-point sends.

Collectives are the "assembly language" (汇编语言) of distributed training:
data parallelism is an all-reduce of gradients, ZeRO is reduce-scatter plus
all-gather, tensor parallelism is an all-reduce per layer, MoE is all-to-all.
Every function here takes a :class:`~.transport.Group` and numpy arrays, is
called by **every** rank of the group with buffers of the same shape and
dtype, and mirrors ``torch.distributed``: ``broadcast``, ``reduce`` and
``all_reduce`` work **in place** on the array (and also return it).

Algorithms, with ``p`` ranks and an ``n``-byte buffer (costs in
:mod:`.cost_model`):

* broadcast / reduce — binomial tree: ``ceil(log2 p)`` rounds; in round ``k``
  every rank that already has the data sends it ``2**k`` ranks further.
* all-gather / reduce-scatter — ring: ``p-1`` steps, each rank sends one
  ``n/p`` chunk to its right neighbour per step.
* all-reduce — ``"naive"`` (reduce everything at rank 0, send the result
  back to each rank: rank 0's link carries ``2(p-1)n``), ``"ring"``
  (reduce-scatter then all-gather: each rank sends ``2(p-1)/p n``, optimal
  bandwidth), ``"recursive_doubling"`` (``log2 p`` rounds exchanging the whole
  buffer with the partner ``rank XOR 2**k``: optimal latency; a non-power-of-two
  world first folds its extra ranks into partners and unfolds at the end).
* all-to-all — pairwise exchange; barrier — dissemination (log2 p rounds).

Chunks of a buffer whose size is not divisible by ``p`` follow
``numpy.array_split``: the first ``size % p`` chunks are one element longer.
"""

from __future__ import annotations

import zlib
from enum import Enum

import numpy as np

from .transport import DistributedError, Group


class ReduceOp(Enum):
    """How values from different ranks are combined (``torch.distributed.ReduceOp``)."""

    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"
    PRODUCT = "product"


#: the elementwise combination of two partial results; AVG adds and divides once at the end
_COMBINE = {ReduceOp.SUM: np.add, ReduceOp.AVG: np.add, ReduceOp.MAX: np.maximum,
            ReduceOp.MIN: np.minimum, ReduceOp.PRODUCT: np.multiply}


def _combine(acc: np.ndarray, incoming: np.ndarray, op: ReduceOp) -> None:
    _COMBINE[op](acc, incoming, out=acc)


def _finish(array: np.ndarray, op: ReduceOp, world_size: int) -> np.ndarray:
    if op is ReduceOp.AVG:
        if not np.issubdtype(array.dtype, np.floating) and array.dtype.kind != "V":
            raise DistributedError(
                f"all_reduce: ReduceOp.AVG needs a floating dtype, got {array.dtype}; "
                "use SUM and divide, or cast first")
        array /= array.dtype.type(world_size)
    return array


def _flat(group: Group, array: np.ndarray, what: str) -> np.ndarray:
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
        raise DistributedError(f"{what}: expects a C-contiguous numpy array, got "
                               f"{type(array).__name__}")
    if group.check_shapes and group.world_size > 1:
        _check_same_shape(group, array, what)
    return array.reshape(-1)


def _describe(array: np.ndarray) -> np.ndarray:
    shape = list(array.shape)[:6]
    return np.array([array.ndim, *shape, *[0] * (6 - len(shape)),
                     zlib.crc32(array.dtype.name.encode())], dtype=np.int64)


def _check_same_shape(group: Group, array: np.ndarray, what: str) -> None:
    """Each rank tells its right neighbour its buffer's shape and dtype; a rank
    whose left neighbour differs raises. If not all ranks agree, some adjacent
    pair differs, so at least one rank raises instead of the collective
    hanging or corrupting memory. Costs one small message (one alpha) per call;
    set ``group.check_shapes = False`` to skip it (like running torch without
    ``TORCH_DISTRIBUTED_DEBUG=DETAIL``)."""
    mine, theirs = _describe(array), np.empty(8, np.int64)
    p, r = group.world_size, group.rank
    _phase(group, "shape check")
    work = group.isend(mine, (r + 1) % p)
    group.recv(theirs, (r - 1) % p)
    work.wait()
    if not np.array_equal(mine, theirs):
        n = int(theirs[0])
        other = tuple(int(d) for d in theirs[1:1 + n])
        same_dtype = theirs[7] == mine[7]
        raise DistributedError(
            f"{what}: rank {r} has a buffer of shape {array.shape} dtype {array.dtype}, but "
            f"rank {(r - 1) % p} has shape {other}"
            f"{' (same dtype)' if same_dtype else ' and a different dtype'}; every rank must "
            "call the same collective with buffers of the same shape and dtype")


def _bounds(n: int, p: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each of ``p`` chunks of ``n`` elements (array_split)."""
    base, extra = divmod(n, p)
    edges = [0]
    for i in range(p):
        edges.append(edges[-1] + base + (1 if i < extra else 0))
    return [(edges[i], edges[i + 1]) for i in range(p)]


def _phase(group: Group, label: str) -> None:
    if hasattr(group, "phase"):
        group.phase = label


# ----------------------------------------------------------------------------- trees

def broadcast(group: Group, array: np.ndarray, src: int = 0) -> np.ndarray:
    """Copy ``src``'s array into every rank's array (binomial tree, in place).

    With ranks renumbered so that ``src`` is 0 (``vr = (rank - src) mod p``),
    in round ``k`` the ranks ``vr < 2**k`` (which have the data) send it to
    ``vr + 2**k``: after ``ceil(log2 p)`` rounds everyone has it."""
    flat = _flat(group, array, "broadcast")
    p, vr = group.world_size, (group.rank - src) % group.world_size
    _phase(group, "broadcast")
    mask = 1
    while mask < p:
        if vr < mask and vr + mask < p:
            group.send(flat, (vr + mask + src) % p)
        elif mask <= vr < 2 * mask:
            group.recv(flat, (vr - mask + src) % p)
        mask <<= 1
    return array


def reduce(group: Group, array: np.ndarray, dst: int = 0,
           op: ReduceOp = ReduceOp.SUM) -> np.ndarray:
    """Combine every rank's array into ``dst``'s (binomial tree, in place on ``dst``;
    other ranks' arrays are used as scratch, as with ``torch.distributed.reduce``).

    The broadcast tree run backwards: in round ``k`` a rank whose bit ``k`` is
    set (renumbered as in :func:`broadcast`) sends its partial result to
    ``vr - 2**k`` and drops out; the others receive and combine."""
    flat = _flat(group, array, "reduce")
    p, vr = group.world_size, (group.rank - dst) % group.world_size
    _phase(group, "reduce")
    incoming = np.empty_like(flat)
    mask = 1
    while mask < p:
        if vr & mask:
            group.send(flat, (vr - mask + dst) % p)
            break
        if vr + mask < p:
            group.recv(incoming, (vr + mask + dst) % p)
            _combine(flat, incoming, op)
        mask <<= 1
    if group.rank == dst:
        _finish(flat, op, p)
    return array


# ----------------------------------------------------------------------------- rings

def _ring_reduce_scatter(group: Group, flat: np.ndarray, op: ReduceOp) -> tuple[int, int]:
    """In place on ``flat``; afterwards chunk ``rank`` holds the reduced values
    (before AVG's division). Returns that chunk's bounds.

    Step ``s`` (0..p-2): send chunk ``(rank - s - 1) mod p`` right, receive
    chunk ``(rank - s - 2) mod p`` from the left and add it in. Each chunk
    travels once around the ring collecting every rank's contribution, ending
    at the rank it is named after."""
    p, r = group.world_size, group.rank
    bounds = _bounds(flat.size, p)
    right, left = (r + 1) % p, (r - 1) % p
    scratch = np.empty(max(b - a for a, b in bounds), dtype=flat.dtype)
    for s in range(p - 1):
        _phase(group, f"reduce-scatter step {s + 1}")
        sa, sb = bounds[(r - s - 1) % p]
        ra, rb = bounds[(r - s - 2) % p]
        incoming = scratch[:rb - ra]
        arriving = group.irecv(incoming, left)     # post the receive first: no extra copy
        leaving = group.isend(flat[sa:sb], right)
        arriving.wait()
        leaving.wait()
        _combine(flat[ra:rb], incoming, op)
    return bounds[r]


def _ring_all_gather(group: Group, flat: np.ndarray) -> None:
    """In place on ``flat``, whose chunk ``rank`` is this rank's contribution.

    Step ``s`` (0..p-2): send chunk ``(rank - s) mod p`` right, receive chunk
    ``(rank - s - 1) mod p`` from the left straight into place."""
    p, r = group.world_size, group.rank
    bounds = _bounds(flat.size, p)
    right, left = (r + 1) % p, (r - 1) % p
    for s in range(p - 1):
        _phase(group, f"all-gather step {s + 1}")
        sa, sb = bounds[(r - s) % p]
        ra, rb = bounds[(r - s - 1) % p]
        arriving = group.irecv(flat[ra:rb], left)
        leaving = group.isend(flat[sa:sb], right)
        arriving.wait()
        leaving.wait()


def all_gather(group: Group, array: np.ndarray) -> list[np.ndarray]:
    """Every rank's array, on every rank: a list of ``p`` arrays (index = rank),
    like ``torch.distributed.all_gather``. Ring algorithm."""
    flat = _flat(group, array, "all_gather")
    p = group.world_size
    out = np.empty(p * flat.size, dtype=flat.dtype)
    out[group.rank * flat.size:(group.rank + 1) * flat.size] = flat
    _ring_all_gather(group, out)
    return [out[i * flat.size:(i + 1) * flat.size].reshape(array.shape) for i in range(p)]


def reduce_scatter(group: Group, array: np.ndarray, op: ReduceOp = ReduceOp.SUM) -> np.ndarray:
    """This rank's chunk of the reduction of everyone's (flattened) array.

    Chunk ``rank`` of ``array.reshape(-1)`` split as ``numpy.array_split``
    (so sizes need not be divisible by ``p``). Ring algorithm; ``array`` is
    used as scratch (like the input list of ``torch.distributed.reduce_scatter``)."""
    flat = _flat(group, array, "reduce_scatter")
    a, b = _ring_reduce_scatter(group, flat, op)
    return _finish(flat[a:b].copy(), op, group.world_size)


# ----------------------------------------------------------------------------- all-reduce

ALL_REDUCE_ALGORITHMS = ("naive", "ring", "recursive_doubling")


def all_reduce(group: Group, array: np.ndarray, op: ReduceOp = ReduceOp.SUM,
               algorithm: str = "ring") -> np.ndarray:
    """Combine every rank's array and leave the result on every rank (in place).

    ``algorithm``: ``"ring"`` (default; bandwidth-optimal), ``"naive"``
    (gather at rank 0, send back), or ``"recursive_doubling"`` (latency-optimal)."""
    flat = _flat(group, array, "all_reduce")
    p = group.world_size
    if p == 1:
        _finish(flat, op, 1)
        return array
    if algorithm == "ring":
        _ring_reduce_scatter(group, flat, op)
        _ring_all_gather(group, flat)
    elif algorithm == "naive":
        _naive_all_reduce(group, flat, op)
    elif algorithm == "recursive_doubling":
        _recursive_doubling(group, flat, op)
    else:
        raise ValueError(f"all_reduce: unknown algorithm {algorithm!r}; choose one of "
                         f"{ALL_REDUCE_ALGORITHMS}")
    _finish(flat, op, p)
    return array


def _naive_all_reduce(group: Group, flat: np.ndarray, op: ReduceOp) -> None:
    """Rank 0 receives all ``p-1`` buffers, combines, and sends the result to each."""
    if group.rank == 0:
        _phase(group, "naive: results out")
        incoming = np.empty_like(flat)
        for src in range(1, group.world_size):
            group.recv(incoming, src)
            _combine(flat, incoming, op)
        works = [group.isend(flat, dst) for dst in range(1, group.world_size)]
        for w in works:
            w.wait()
    else:
        _phase(group, "naive: gather at root")
        group.send(flat, 0)
        group.recv(flat, 0)


def _recursive_doubling(group: Group, flat: np.ndarray, op: ReduceOp) -> None:
    """Recursive doubling with a fold for non-powers of two.

    Let ``q`` be the largest power of two <= p and ``extra = p - q``. Ranks
    ``2i`` (``i < extra``) send their buffer to ``2i+1`` and sit out; now ``q``
    ranks remain, renumbered ``0..q-1``. In round ``k`` each exchanges its whole
    buffer with the partner whose new number differs in bit ``k`` and combines.
    Finally ``2i+1`` hands the result back to ``2i``."""
    p, r = group.world_size, group.rank
    q = 1 << (p.bit_length() - 1)
    extra = p - q
    incoming = np.empty_like(flat)
    if r < 2 * extra:
        if r % 2 == 0:
            _phase(group, "fold in")
            group.send(flat, r + 1)
            group.recv(flat, r + 1)
            return
        group.recv(incoming, r - 1)
        _combine(flat, incoming, op)
        new = r // 2
    else:
        new = r - extra

    def real(v: int) -> int:
        return 2 * v + 1 if v < extra else v + extra

    mask = 1
    while mask < q:
        _phase(group, f"recursive doubling round {mask.bit_length()}")
        partner = real(new ^ mask)
        work = group.isend(flat.copy(), partner)
        group.recv(incoming, partner)
        work.wait()
        _combine(flat, incoming, op)
        mask <<= 1
    if r < 2 * extra:
        _phase(group, "fold out")
        group.send(flat, r - 1)


# ----------------------------------------------------------------------------- others

def all_to_all(group: Group, chunks: list[np.ndarray]) -> list[np.ndarray]:
    """Rank ``i`` sends ``chunks[j]`` to rank ``j``; returns the ``p`` chunks
    received (index = source rank). All chunks share one shape and dtype
    (``torch.distributed.all_to_all`` with equal splits). Pairwise exchange: in
    step ``s`` send to ``rank + s`` and receive from ``rank - s``."""
    p, r = group.world_size, group.rank
    if len(chunks) != p:
        raise DistributedError(f"all_to_all: rank {r} passed {len(chunks)} chunks for a world "
                               f"of {p}; pass exactly one chunk per rank")
    if group.check_shapes and p > 1:
        _check_same_shape(group, np.ascontiguousarray(chunks[0]), "all_to_all")
    out = [np.empty_like(c) for c in chunks]
    out[r][...] = chunks[r]
    for s in range(1, p):
        _phase(group, f"all-to-all step {s}")
        dst, src = (r + s) % p, (r - s) % p
        work = group.isend(np.ascontiguousarray(chunks[dst]), dst)
        group.recv(out[src], src)
        work.wait()
    return out


def barrier(group: Group) -> None:
    """Return only after every rank has entered (dissemination barrier:
    in round ``k`` signal ``rank + 2**k`` and wait for ``rank - 2**k``)."""
    p, r = group.world_size, group.rank
    token, got = np.zeros(1, np.uint8), np.empty(1, np.uint8)
    k = 1
    while k < p:
        _phase(group, "barrier")
        work = group.isend(token, (r + k) % p)
        group.recv(got, (r - k) % p)
        work.wait()
        k <<= 1
