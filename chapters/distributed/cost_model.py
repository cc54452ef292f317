"""The alpha-beta (latency-bandwidth) cost model of communication (通信开销).

Sending ``n`` bytes from one rank to another takes ``alpha + n * beta``:
``alpha`` is the fixed latency of a message (software stack, handshakes),
``beta`` the seconds per byte (1 / bandwidth). From it, with ``p`` ranks and a
buffer of ``n`` bytes on each rank (links full duplex; a rank sends one message
at a time and receives one at a time):

=========================  ==========================================  ==================
algorithm                   time                                        bytes sent by a rank
=========================  ==========================================  ==================
broadcast (tree)            ceil(log2 p) (alpha + n beta)               <= ceil(log2 p) n
reduce (tree)               the same; a bit less when p is not a        n
                            power of two (short branches finish early)
all-gather (ring)           (p-1) (alpha + n/p beta)   [n = output]     (p-1)/p n
reduce-scatter (ring)       (p-1) (alpha + n/p beta)   [n = input]      (p-1)/p n
all-reduce ring             2(p-1) (alpha + n/p beta)                   2(p-1)/p n
all-reduce naive            p alpha + 2(p-1) n beta                     root: (p-1) n
all-reduce rec. doubling    ceil(log2 p) (alpha + n beta) (+2 if p      log2 p n
                            is not a power of two: fold in and out)
=========================  ==========================================  ==================

The ring's bandwidth term ``2(p-1)/p n beta`` tends to ``2 n beta``: the time
and the bytes *per rank* stay almost constant as ranks are added, while the
total traffic over all links, ``2(p-1) n``, grows linearly; only the latency
term ``2(p-1) alpha`` grows with ``p``. Recursive doubling pays ``log2 p``
latencies but sends the whole buffer each round: better for small buffers,
worse for large ones.

:func:`measure_p2p` times ping-pongs between ranks 0 and 1 and :func:`fit_alpha_beta`
fits the two constants by least squares; :func:`measure_collective` times any
collective, so predictions can be set against measurements.

Two consequences the chapter checks: tensor parallelism's bytes grow with the
batch and pass data parallelism's gradient bytes from a batch of about the
hidden width (:func:`tp_exceeds_dp_batch`); and with a fixed global batch the
predicted step time is smallest at ``sqrt((C - 2 n beta) / (2 alpha))`` ranks
(:func:`fastest_rank_count`), after which each added rank slows the step.
"""

from __future__ import annotations

import math

import numpy as np

from .collectives import ReduceOp, all_reduce, barrier, broadcast
from .transport import Group


def predict(algorithm: str, p: int, nbytes: float, alpha: float, beta: float) -> float:
    """Predicted seconds for one collective (see the table above).

    ``algorithm``: ``"ring"``, ``"naive"``, ``"recursive_doubling"`` (all-reduce),
    ``"broadcast"``, ``"reduce"``, ``"all_gather"``, ``"reduce_scatter"``."""
    if p == 1:
        return 0.0
    log_p = math.ceil(math.log2(p))
    if algorithm == "ring":
        return 2 * (p - 1) * (alpha + nbytes / p * beta)
    if algorithm == "naive":
        return p * alpha + 2 * (p - 1) * nbytes * beta
    if algorithm == "recursive_doubling":
        q = 1 << (p.bit_length() - 1)
        rounds = int(math.log2(q)) + (2 if q != p else 0)
        return rounds * (alpha + nbytes * beta)
    if algorithm in ("broadcast", "reduce"):
        return log_p * (alpha + nbytes * beta)
    if algorithm in ("all_gather", "reduce_scatter"):
        return (p - 1) * (alpha + nbytes / p * beta)
    raise ValueError(f"predict: unknown algorithm {algorithm!r}")


def ring_bytes_per_rank(p: int, nbytes: int) -> float:
    """Bytes each rank sends in a ring all-reduce of an ``nbytes`` buffer."""
    return 2 * (p - 1) / p * nbytes


def tensor_parallel_bytes_per_rank(p: int, batch: int, features: int, itemsize: int = 4) -> float:
    """Bytes each rank sends per step for one Megatron MLP block split over ``p`` ranks.

    Forward all-reduces the row-parallel layer's output (operator *g*), backward
    the column-parallel layer's input gradient (operator *f*); each holds
    ``batch x features`` values, and the weights never travel::

        2 * 2(p-1)/p * batch * features * itemsize

    proportional to the batch, unlike data parallelism's gradient bytes."""
    return 2 * ring_bytes_per_rank(p, batch * features * itemsize)


def tp_exceeds_dp_batch(features: int, grad_bytes: int, itemsize: int = 4) -> int:
    """The smallest batch from which one MLP block's tensor-parallel bytes per
    rank exceed those of data parallelism's ring all-reduce of ``grad_bytes``.

    Both are ring all-reduces, so the factor ``2(p-1)/p`` cancels and ``p``
    drops out: ``2 * batch * features * itemsize > grad_bytes``. For an MLP
    ``features -> hidden -> features`` (``2 * features * hidden`` weights) the
    answer is about ``hidden``: the batch equal to the hidden width."""
    return grad_bytes // (2 * features * itemsize) + 1


def data_parallel_step_seconds(p: int, compute_seconds: float, grad_bytes: float,
                               alpha: float, beta: float) -> float:
    """Predicted seconds of one data-parallel step with a fixed global batch
    (strong scaling) on ``p`` ranks, communication not overlapped::

        T(p) = C / p + 2(p-1) alpha + 2(p-1)/p n beta

    ``C``: the whole batch's forward and backward on one rank; ``n``: gradient bytes."""
    return compute_seconds / p + predict("ring", p, grad_bytes, alpha, beta)


def fastest_rank_count(compute_seconds: float, grad_bytes: float, alpha: float,
                       beta: float) -> int:
    """The rank count that minimises :func:`data_parallel_step_seconds`.

    Gathering the terms, ``T(p) = (C - 2 n beta) / p + 2 alpha p + const``:
    convex in ``p``, falling until ``p* = sqrt((C - 2 n beta) / (2 alpha))`` and
    rising after it, so every rank added past ``p*`` makes the step slower.
    Returns the better of the two whole numbers around ``p*``; 1 when
    ``C <= 2 n beta`` (the bandwidth term alone eats all the compute saved)."""
    if alpha <= 0:
        raise ValueError(f"fastest_rank_count: alpha = {alpha}; with no latency the predicted "
                         "step time keeps falling as ranks are added, so there is no fastest "
                         "count. Pass the measured per-message latency (alpha > 0).")
    spare = compute_seconds - 2 * grad_bytes * beta
    if spare <= 0:
        return 1
    root = math.sqrt(spare / (2 * alpha))
    around = sorted({max(1, math.floor(root)), max(1, math.ceil(root))})
    return min(around, key=lambda p: data_parallel_step_seconds(p, compute_seconds, grad_bytes,
                                                                alpha, beta))


def fit_alpha_beta(nbytes, seconds) -> tuple[float, float]:
    """Least-squares ``seconds ~ alpha + nbytes * beta``; returns ``(alpha, beta)``.

    Fitted on relative error (each point weighted by 1/seconds), so that the
    microsecond points for small messages count as much as the big ones."""
    n = np.asarray(nbytes, dtype=np.float64)
    t = np.asarray(seconds, dtype=np.float64)
    design = np.stack([np.ones_like(n), n], axis=1) / t[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
    return float(alpha), float(beta)


def measure_p2p(group: Group, sizes, repeats: int = 5) -> list[float]:
    """One-way time (half the best ping-pong round trip) for each message size
    in bytes, between ranks 0 and 1; other ranks only wait at the barriers.
    Every rank returns rank 0's numbers (broadcast)."""
    out = np.zeros(len(sizes))
    for i, size in enumerate(sizes):
        buf = np.zeros(int(size), np.uint8)
        best = math.inf
        for _ in range(repeats):
            barrier(group)
            start = group.now()
            if group.rank == 0:
                group.send(buf, 1)
                group.recv(buf, 1)
            elif group.rank == 1:
                group.recv(buf, 0)
                group.send(buf, 0)
            best = min(best, (group.now() - start) / 2)
        out[i] = best
    return list(broadcast(group, out, src=0))


def measure_collective(group: Group, fn, repeats: int = 3) -> float:
    """Best-of-``repeats`` seconds for ``fn()`` (a collective called by every
    rank), each run started together after a barrier and counted until the
    slowest rank finished (the max over ranks, all-reduced)."""
    best = math.inf
    for _ in range(repeats):
        barrier(group)
        start = group.now()
        fn()
        elapsed = np.array([group.now() - start])
        checks, group.check_shapes = group.check_shapes, False
        all_reduce(group, elapsed, op=ReduceOp.MAX)
        group.check_shapes = checks
        best = min(best, float(elapsed[0]))
    return best

