"""``torch.nn.parallel.DistributedDataParallel``'s signature over chapter 3's DDP (:mod:`.ddp`)."""

from __future__ import annotations

from chapters.autodiff import is_grad_enabled

from . import ddp
from .process_group import resolve
from .torch_collectives import broadcast

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
