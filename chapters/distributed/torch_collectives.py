"""``torch.distributed``'s collectives and point-to-point calls on engine tensors.

Each call checks its arguments as torch does, then queues one of chapter 3's
own collectives (:mod:`.collectives`) on the group's communication thread
(:class:`~.process_group.ProcessGroup.run`): in place, returning ``None``,
or a :class:`~.process_group.Work` with ``async_op=True``. ``src``/``dst``
are global ranks, ``group_src``/``group_dst`` ranks within the group. A
tensor that is not contiguous is reduced in a contiguous copy and written back.
"""

from __future__ import annotations

import numpy as np

from chapters.autodiff import Tensor

from . import collectives as C
from .process_group import ProcessGroup, resolve


class _Unsupported:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: not implemented>"


class ReduceOp:
    """How a reduction combines ranks' values (``torch.distributed.ReduceOp``)."""

    SUM, AVG, MAX, MIN, PRODUCT = (C.ReduceOp.SUM, C.ReduceOp.AVG, C.ReduceOp.MAX,
                                   C.ReduceOp.MIN, C.ReduceOp.PRODUCT)
    BAND, BOR, BXOR, PREMUL_SUM = (_Unsupported(n) for n in ("BAND", "BOR", "BXOR", "PREMUL_SUM"))


def _op(op, what: str) -> C.ReduceOp:
    if isinstance(op, C.ReduceOp):
        return op
    if isinstance(op, _Unsupported):
        raise NotImplementedError(
            f"{what}: ReduceOp.{op.name} is not implemented by chapter 3's collectives, which "
            "combine with SUM, AVG, MAX, MIN or PRODUCT; for flags in 0/1 integers, MAX is "
            "a bitwise or (BOR) and MIN a bitwise and (BAND)")
    raise TypeError(f"{what}: op must be a dist.ReduceOp, got {op!r}")


def _data(tensor, what: str, name: str = "tensor") -> np.ndarray:
    if isinstance(tensor, Tensor):
        return tensor.data
    if type(tensor).__module__.startswith("torch"):
        raise TypeError(
            f"{what}: `{name}` is a tensor of the real torch ({type(tensor).__name__}); chapter "
            "3's collectives move this course's engine tensors (chapters.autodiff.Tensor, which "
            "`torch.tensor` makes under `python -m chapters.as_torch`). Use the real "
            "torch.distributed for real torch tensors.")
    raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                    f"torch.Tensor but got {type(tensor)} instead.")


def _contiguous(array: np.ndarray) -> np.ndarray:
    return array if array.flags.c_contiguous else array.copy(order="C")


def _store(tensor: Tensor, values: np.ndarray) -> None:
    """Write ``values`` into ``tensor`` in place (a collective is an in-place op:
    its version counter moves, as torch's does)."""
    if values is not tensor.data:
        tensor.data[...] = values.reshape(tensor.data.shape)
    tensor._vbox[0] += 1


def _root(pg: ProcessGroup, rank, group_rank, what: str, name: str) -> int:
    """torch's ``src``/``group_src`` (or ``dst``): exactly one, as a rank of ``pg``."""
    if (rank is None) == (group_rank is None):
        raise ValueError(f"{what}: Either group_{name} or {name} must be specified"
                         if rank is None else f"{what}: Can only specify one of group_{name} "
                         f"or {name}")
    root = pg.group_rank(rank) if group_rank is None else group_rank
    if not 0 <= root < pg.size():
        raise RuntimeError(f"{what}: invalid root rank: {root}; ranks of this group are "
                           f"0..{pg.size() - 1}")
    return root


def _same_layout(tensors, like: np.ndarray, what: str, name: str) -> None:
    for i, t in enumerate(tensors):
        d = _data(t, what, name)
        if d.shape != like.shape or d.dtype != like.dtype:
            raise RuntimeError(f"{what}: invalid tensor size at index {i} (expected "
                               f"{tuple(like.shape)} {like.dtype}, got {tuple(d.shape)} "
                               f"{d.dtype})")


def _count(tensors, p: int, what: str, name: str) -> None:
    if len(tensors) != p:
        raise ValueError(f"{what}: {name} has {len(tensors)} tensors for a group of {p} "
                         "ranks; pass exactly one per rank")


# ----------------------------------------------------------------------------- collectives

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    data, engine_op = _data(tensor, "all_reduce"), _op(op, "all_reduce")
    pg = resolve(group, "all_reduce")
    if pg is None:
        return None

    def job():
        buf = _contiguous(data)
        C.all_reduce(pg.engine, buf, engine_op)
        _store(tensor, buf)
    return pg.run(job, async_op)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False,
              group_src: int | None = None):
    data, pg = _data(tensor, "broadcast"), resolve(group, "broadcast")
    if pg is None:
        return None
    root = _root(pg, src, group_src, "broadcast", "src")

    def job():
        buf = _contiguous(data)
        C.broadcast(pg.engine, buf, src=root)
        _store(tensor, buf)
    return pg.run(job, async_op)


def reduce(tensor, dst: int | None = None, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst: int | None = None):
    """Only rank ``dst`` receives the result; the others' tensors are scratch (as torch's docs)."""
    data, engine_op, pg = _data(tensor, "reduce"), _op(op, "reduce"), resolve(group, "reduce")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "reduce", "dst")

    def job():
        buf = _contiguous(data)
        C.reduce(pg.engine, buf, dst=root, op=engine_op)
        _store(tensor, buf)
    return pg.run(job, async_op)


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    data, pg = _data(tensor, "all_gather"), resolve(group, "all_gather")
    if pg is None:
        return None
    _count(tensor_list, pg.size(), "all_gather", "tensor_list")
    _same_layout(tensor_list, data, "all_gather", "tensor_list")

    def job():
        for out, part in zip(tensor_list, C.all_gather(pg.engine, _contiguous(data)), strict=True):
            _store(out, part)
    return pg.run(job, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """``output_tensor`` holds the ranks' inputs one after another (stacked or concatenated)."""
    out = _data(output_tensor, "all_gather_into_tensor", "output_tensor")
    inp = _data(input_tensor, "all_gather_into_tensor", "input_tensor")
    pg = resolve(group, "all_gather_into_tensor")
    if pg is None:
        return None
    _sizes(out, inp, pg.size(), "all_gather_into_tensor", "output", "input")

    def job():
        _store(output_tensor, np.concatenate(C.all_gather(pg.engine, _contiguous(inp).reshape(-1))))
    return pg.run(job, async_op)


def _sizes(big: np.ndarray, small: np.ndarray, p: int, what: str, big_name: str,
           small_name: str) -> None:
    if big.size != p * small.size or big.dtype != small.dtype:
        raise RuntimeError(
            f"{what}: the {big_name} tensor ({big.size} elements of {big.dtype}) must be "
            f"world_size ({p}) times the {small_name} tensor ({small.size} elements of "
            f"{small.dtype}), with the same dtype")


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    data, engine_op = _data(output, "reduce_scatter", "output"), _op(op, "reduce_scatter")
    pg = resolve(group, "reduce_scatter")
    if pg is None:
        return None
    _count(input_list, pg.size(), "reduce_scatter", "input_list")
    _same_layout(input_list, data, "reduce_scatter", "input_list")

    def job():
        flat = np.concatenate([t.data.reshape(-1) for t in input_list])
        _store(output, C.reduce_scatter(pg.engine, flat, engine_op))
    return pg.run(job, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    out = _data(output, "reduce_scatter_tensor", "output")
    inp = _data(input, "reduce_scatter_tensor", "input")
    engine_op, pg = _op(op, "reduce_scatter_tensor"), resolve(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    _sizes(inp, out, pg.size(), "reduce_scatter_tensor", "input", "output")

    def job():
        _store(output, C.reduce_scatter(pg.engine, inp.reshape(-1).copy(), engine_op))
    return pg.run(job, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    pg = resolve(group, "all_to_all")
    if pg is None:
        return None
    _count(input_tensor_list, pg.size(), "all_to_all", "input_tensor_list")
    _count(output_tensor_list, pg.size(), "all_to_all", "output_tensor_list")
    like = _data(input_tensor_list[0], "all_to_all", "input_tensor_list")
    try:
        _same_layout(list(input_tensor_list) + list(output_tensor_list), like, "all_to_all",
                     "input_tensor_list/output_tensor_list")
    except RuntimeError as error:
        raise NotImplementedError(
            f"{error}: chapter 3's all_to_all exchanges chunks of one shape and dtype; pad "
            "the chunks to one shape") from None

    def job():
        got = C.all_to_all(pg.engine, [_contiguous(t.data) for t in input_tensor_list])
        for out, part in zip(output_tensor_list, got, strict=True):
            _store(out, part)
    return pg.run(job, async_op)


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    pg = resolve(group, "barrier")
    if pg is None:
        return None
    return pg.run(lambda: C.barrier(pg.engine), async_op)


# ----------------------------------------------------------------------------- point to point

def _peer(pg: ProcessGroup, rank, group_rank, what: str, name: str, tag: int) -> int:
    if tag != 0:
        raise NotImplementedError(f"{what}(tag={tag}): chapter 3's transport has no tags; "
                                  "messages between two ranks arrive in the order sent, so "
                                  "send and receive in matching order with tag=0")
    if rank is None and group_rank is None and name == "src":
        raise NotImplementedError(f"{what}(src=None): receiving from any source is not "
                                  "implemented; pass src=the sending rank")
    peer = _root(pg, rank, group_rank, what, name)
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process." if name == "dst" else
                         "Invalid source rank: source rank should not be the same as the "
                         "rank of the current process.")
    return peer


def isend(tensor, dst: int | None = None, group=None, tag: int = 0,
          group_dst: int | None = None):
    data, pg = _data(tensor, "isend"), resolve(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "isend", "dst", tag)
    payload = _contiguous(data)
    return pg.run(lambda: pg.engine.isend(payload, peer), async_op=True)


def irecv(tensor, src: int | None = None, group=None, tag: int = 0,
          group_src: int | None = None):
    data, pg = _data(tensor, "irecv"), resolve(group, "irecv")
    if pg is None:
        return None
    peer = _peer(pg, src, group_src, "irecv", "src", tag)
    buf = _contiguous(data)
    return pg.run(lambda: pg.engine.irecv(buf, peer), async_op=True,
                  after=lambda: _store(tensor, buf))


def send(tensor, dst: int | None = None, group=None, tag: int = 0,
         group_dst: int | None = None) -> None:
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src: int | None = None, group=None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Fill ``tensor`` from ``src``; returns the sender's global rank (as torch)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    pg = resolve(group, "recv")
    return src if src is not None else pg.ranks[group_src]
