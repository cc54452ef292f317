"""``torch.distributed`` and ``DistributedDataParallel``, in torch's names, on chapter 3's engine.

An unmodified torch training script that calls ``dist.init_process_group``,
``dist.all_reduce(t)`` or wraps its model in ``DistributedDataParallel`` runs
here on engine tensors (:class:`chapters.autodiff.Tensor`) and engine
modules: the collectives are this chapter's own (trees, rings; see
:mod:`.collectives`), sent over torch's point-to-point links; DDP is
:mod:`.ddp` (buckets, hooks, overlap). Process groups are in :mod:`.process_group`.

Semantics follow torch: collectives work in place and return ``None``, or a
:class:`~.process_group.Work` with ``async_op=True``; ``src``/``dst`` are
global ranks (``group_src``/``group_dst`` ranks within the group); misuse
raises torch's error types and wording. What the engine does not do raises
``NotImplementedError`` naming what to use instead — never a different
result. Beyond torch: ``ReduceOp.AVG`` works on gloo too (it averages in the
tensor's floating dtype).
"""

from __future__ import annotations

import numpy as np

from chapters.autodiff import Tensor, is_grad_enabled

from . import collectives as C
from . import ddp
from .process_group import (
    GroupMember,
    ProcessGroup,
    Work,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_initialized,
    new_group,
    resolve,
)


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


# ----------------------------------------------------------------------------- DDP

_REFUSED_DDP = {
    "find_unused_parameters": (False, "every parameter must get a gradient in every "
                               "synchronized backward: freeze unused ones with "
                               "requires_grad_(False)"),
    "mixed_precision": (None, "cast the module yourself or use autocast (chapters.amp)"),
    "device_mesh": (None, "pass process_group=new_group(ranks)"),
    "delay_all_reduce_named_params": (None, "leave it None"),
    "param_to_hook_all_reduce": (None, "leave it None"),
    "skip_all_reduce_unused_params": (False, "leave it False"),
    "bucket_cap_mb_list": (None, "use one bucket_cap_mb"),
}


class DistributedDataParallel(ddp.DistributedDataParallel):
    """``torch.nn.parallel.DistributedDataParallel`` for engine modules (chapter 3's DDP).

    As torch: rank 0's parameters and buffers are broadcast at construction
    (unless ``init_sync=False``; deprecated ``broadcast_buffers=False`` leaves
    buffers out); buckets of ``bucket_cap_mb`` (25 MiB, first 1 MiB) are
    all-reduced during backward; ``no_sync()`` accumulates locally and the
    next backward outside it averages the accumulated ``.grad``; buffers are
    broadcast from the group's rank 0 before a forward that follows a forward
    run with grad enabled outside ``no_sync`` (torch's
    ``require_forward_param_sync``). The module lives on the CPU, so
    ``device_ids``/``output_device`` must be ``None``. ``dim``,
    ``check_reduction``, ``gradient_as_bucket_view``, ``static_graph`` and
    ``batched_grad_copy`` change how torch schedules or stores, not what it
    computes: accepted, with the same results."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        given = dict(find_unused_parameters=find_unused_parameters,
                     mixed_precision=mixed_precision, device_mesh=device_mesh,
                     delay_all_reduce_named_params=delay_all_reduce_named_params,
                     param_to_hook_all_reduce=param_to_hook_all_reduce,
                     skip_all_reduce_unused_params=skip_all_reduce_unused_params,
                     bucket_cap_mb_list=bucket_cap_mb_list)
        for name, (default, instead) in _REFUSED_DDP.items():
            if given[name] != default:
                raise NotImplementedError(f"DistributedDataParallel({name}={given[name]!r}) is "
                                          f"not implemented by chapter 3's DDP; {instead}")
        if device_ids or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                "{device(type='cpu')}. Engine modules live on the CPU: leave both None.")
        pg = resolve(process_group, "DistributedDataParallel")
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not in process_group")
        pg.run(lambda: None, async_op=False)   # queued collectives first: one order of messages
        if forward_sync_buffers is None:
            forward_sync_buffers = True if broadcast_buffers is None else broadcast_buffers
            init_buffers = forward_sync_buffers
        else:
            init_buffers = True
        super().__init__(module, pg.engine, bucket_cap_mb, init_sync=init_sync,
                         sync_buffers=init_buffers, executor=pg.executor)
        for name, value in dict(process_group=pg, device_ids=None, output_device=None, dim=dim,
                                forward_sync_buffers=forward_sync_buffers,
                                require_forward_param_sync=True,
                                gradient_as_bucket_view=gradient_as_bucket_view,
                                static_graph=static_graph).items():
            object.__setattr__(self, name, value)

    @property
    def broadcast_buffers(self) -> bool:
        return self.forward_sync_buffers

    @property
    def require_backward_grad_sync(self) -> bool:
        return self._sync

    def forward(self, *inputs, **kwargs):
        buffers = list(self.module.buffers())
        if self.require_forward_param_sync and self.forward_sync_buffers and buffers:
            for b in buffers:
                broadcast(b, group=self.process_group, group_src=0)
        out = super().forward(*inputs, **kwargs)
        object.__setattr__(self, "require_forward_param_sync", is_grad_enabled() and self._sync)
        return out

    def register_comm_hook(self, state, hook) -> None:
        raise NotImplementedError(
            "DistributedDataParallel.register_comm_hook: torch's hooks take a GradBucket and "
            "return a Future, which this engine does not have; chapter 3's hooks "
            "hook(state, group, buffer) are chapters.distributed.ddp.DistributedDataParallel"
            ".register_comm_hook (see chapters.distributed.compression)")

    def join(self, *args, **kwargs):
        raise NotImplementedError(
            "DistributedDataParallel.join (uneven inputs) is not implemented; give every rank "
            "the same number of batches (e.g. DistributedSampler(drop_last=True))")


# ----------------------------------------------------------------------------- the rest

_INSTEAD = {
    "gather": "all_gather, and keep the result on the destination rank",
    "scatter": "broadcast the whole tensor and take this rank's slice",
    "all_gather_object": "all_gather a tensor",
    "broadcast_object_list": "broadcast a tensor",
    "gather_object": "all_gather a tensor",
    "scatter_object_list": "broadcast a tensor",
    "monitored_barrier": "barrier",
    "batch_isend_irecv": "isend/irecv, waiting on each Work",
    "P2POp": "isend/irecv",
    "all_reduce_coalesced": "all_reduce on one flattened tensor",
    "init_device_mesh": "new_group",
    "DeviceMesh": "new_group",
    "TCPStore": "init_process_group(init_method='env://' or 'tcp://...')",
    "FileStore": "init_process_group(init_method='env://' or 'tcp://...')",
    "HashStore": "init_process_group(init_method='env://' or 'tcp://...')",
}


def __getattr__(name: str):
    if name in _INSTEAD:
        raise NotImplementedError(f"torch.distributed.{name} is not implemented on chapter 3's "
                                  f"engine; use {_INSTEAD[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DistributedDataParallel", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "__getattr__",
    "all_gather", "all_gather_into_tensor", "all_reduce", "all_to_all", "barrier", "broadcast",
    "destroy_process_group", "get_backend", "get_global_rank", "get_process_group_ranks",
    "get_rank", "get_world_size", "group", "init_process_group", "irecv", "is_available",
    "is_initialized", "isend", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "send",
]
