"""Process groups (进程组) in ``torch.distributed``'s names, over chapter 3's transport.

:func:`init_process_group` joins the world exactly as torch does (it *is*
torch's rendezvous: ``env://`` reads ``MASTER_ADDR``, ``MASTER_PORT``,
``RANK`` and ``WORLD_SIZE``; ``tcp://`` and stores work too), and then
wraps the world in a :class:`ProcessGroup`: chapter 3's
:class:`~.torch_transport.TorchGroup` (point-to-point only) plus **one
communication thread** that runs every collective of the group, in the order
they were called. That thread is what makes ``async_op=True`` real (the
caller goes on while its all-reduce runs) and keeps every message of one
group in one order, as a torch ``ProcessGroup``'s work queue does; DDP's
bucket all-reduces go through the same thread.

Teardown: :func:`destroy_process_group` waits for every queued collective and
every ``Work`` not yet waited on, stops the thread, then destroys torch's
group, so no gloo thread is still talking when the interpreter exits. If a
program never calls it, an ``atexit`` handler does the same.
"""

from __future__ import annotations

import atexit
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.distributed as dist

from .torch_transport import TorchGroup
from .transport import Group, SubGroup

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class Work:
    """A collective or transfer in flight (``torch.distributed.Work``).

    ``wait()`` blocks until it is done (re-raising its error, if any) and
    returns ``True``; the output tensors may be read only after it."""

    def __init__(self, future, owner: ProcessGroup | None = None, after=None):
        self._future, self._owner, self._after = future, owner, after
        self._done = False
        if owner is not None:
            owner.unwaited.add(self)

    def wait(self, timeout=None) -> bool:
        if self._done:
            return True
        seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else timeout
        try:
            transfer = self._future.result(seconds)
            if transfer is not None:      # a point-to-point transfer: started, now finish it
                transfer.wait()
            if self._after is not None:
                self._after()
        finally:
            if self._owner is not None:
                self._owner.unwaited.discard(self)
        self._done = True
        return True

    def is_completed(self) -> bool:
        """Done and waited for; a collective also once its thread has finished it."""
        return self._done or (self._after is None and self._future.done()
                              and self._future.exception() is None
                              and self._future.result() is None)


class ProcessGroup:
    """Some ranks of the world, the engine group they talk through, and the
    communication thread of the world (``torch.distributed.ProcessGroup``).

    ``rank()`` and ``size()`` are this rank's position in the group and the
    group's size, as in torch; ``ranks`` are the members' global ranks."""

    def __init__(self, engine: Group, ranks: list[int], executor: ThreadPoolExecutor,
                 backend: str):
        self.engine, self.ranks, self.executor, self.backend = engine, ranks, executor, backend
        self.unwaited: set[Work] = set()

    def rank(self) -> int:
        return self.engine.rank

    def size(self) -> int:
        return self.engine.world_size

    def group_rank(self, global_rank: int) -> int:
        if global_rank not in self.ranks:
            raise ValueError(f"Global rank {global_rank} is not part of group {self}")
        return self.ranks.index(global_rank)

    def run(self, fn, async_op: bool, after=None) -> Work | None:
        """Queue ``fn`` on the communication thread; wait for it unless ``async_op``."""
        work = Work(self.executor.submit(fn), self if async_op else None, after)
        if async_op:
            return work
        work.wait()
        return None

    def __repr__(self) -> str:
        return f"ProcessGroup(ranks={self.ranks}, backend={self.backend!r})"


class GroupMember:
    """``torch.distributed.GroupMember``: ``WORLD`` is the default group once
    initialised; ``NON_GROUP_MEMBER`` is what :func:`new_group` gives ranks left out."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


group = GroupMember   # ``dist.group.WORLD``, as in torch
_SUBGROUPS: list[ProcessGroup] = []


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return GroupMember.WORLD is not None


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout=None, world_size: int = -1, rank: int = -1, store=None,
                       group_name: str = "", pg_options=None, device_id=None) -> None:
    """Join the world (torch's own rendezvous) and start its communication thread.

    ``backend`` ``None`` or ``"gloo"`` moves the engine's arrays in place over
    TCP; with ``"nccl"`` each message is staged through GPU ``LOCAL_RANK``."""
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    extra = {} if device_id is None else {"device_id": device_id}
    dist.init_process_group(backend, init_method=init_method, timeout=timeout,
                            world_size=world_size, rank=rank, store=store,
                            group_name=group_name, pg_options=pg_options, **extra)
    device = "cpu"
    if backend is not None and "nccl" in backend and "gloo" not in backend:
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
    engine = TorchGroup(device)
    executor = ThreadPoolExecutor(1, thread_name_prefix="engine-process-group")
    GroupMember.WORLD = ProcessGroup(engine, list(range(engine.world_size)), executor,
                                     dist.get_backend())


def resolve(pg, what: str) -> ProcessGroup | None:
    """The group a call names (``None``: the default group), or ``None`` with
    torch's warning when this rank is not a member."""
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    if pg is None:
        return GroupMember.WORLD
    if pg is GroupMember.NON_GROUP_MEMBER:
        warnings.warn(f"Running {what} on global rank {get_rank()} which does not belong to "
                      "the given group.", stacklevel=3)
        return None
    if not isinstance(pg, ProcessGroup):
        raise TypeError(f"{what}: group must be None or a group from new_group(), got "
                        f"{type(pg).__name__}")
    return pg


def get_rank(group=None) -> int:
    pg = resolve(group, "get_rank") if group is not GroupMember.NON_GROUP_MEMBER else None
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    pg = resolve(group, "get_world_size") if group is not GroupMember.NON_GROUP_MEMBER else None
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    return resolve(group, "get_backend").backend


def get_process_group_ranks(group) -> list[int]:
    return list(resolve(group, "get_process_group_ranks").ranks)


def get_global_rank(group, group_rank: int) -> int:
    return resolve(group, "get_global_rank").ranks[group_rank]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization: bool = False, group_desc=None, device_id=None,
              sort_ranks: bool = True):
    """A group of some ranks (chapter 3's :class:`~.transport.SubGroup`): its
    messages travel through the world's links and communication thread, so no
    new connections are made. Ranks not in ``ranks`` get ``GroupMember.NON_GROUP_MEMBER``."""
    world = resolve(None, "new_group")
    if backend is not None and backend != world.backend:
        raise NotImplementedError(
            f"new_group(backend={backend!r}): a subgroup here talks through the world's "
            f"{world.backend!r} links; leave backend=None")
    members = list(range(world.size())) if ranks is None else [int(r) for r in ranks]
    members = sorted(members) if sort_ranks else members
    bad = [r for r in members if not 0 <= r < world.size()]
    if bad or len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks {members} must be distinct ranks of the world "
                         f"0..{world.size() - 1}")
    if world.rank() not in members:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(SubGroup(world.engine, members), members, world.executor, world.backend)
    _SUBGROUPS.append(pg)
    return pg


def _drain(pg: ProcessGroup) -> None:
    """Finish every ``Work`` of ``pg`` that its caller never waited on."""
    for work in list(pg.unwaited):
        try:
            work.wait()
        except Exception as error:  # noqa: BLE001 - its caller never asked; say so
            warnings.warn(f"destroy_process_group: an operation that was never waited on "
                          f"failed: {error}", stacklevel=3)


def destroy_process_group(group=None) -> None:
    """Release a group; with ``None``, every group and the world (then torch's own).

    Every queued collective and every ``Work`` not yet waited on is finished
    first, and the communication thread is stopped before torch's group goes."""
    if GroupMember.WORLD is None:
        raise AssertionError("Process group cannot be None")
    if group is not None and group is not GroupMember.WORLD:
        pg = resolve(group, "destroy_process_group")
        if pg is not None:
            _drain(pg)
            _SUBGROUPS.remove(pg)
        return
    world = GroupMember.WORLD
    for pg in [*_SUBGROUPS, world]:
        _drain(pg)
    world.executor.shutdown(wait=True)
    _SUBGROUPS.clear()
    GroupMember.WORLD = None
    if dist.is_initialized():
        dist.destroy_process_group()


@atexit.register
def _release_at_exit() -> None:
    """A program that never destroyed its group still leaves no talking thread behind."""
    if GroupMember.WORLD is not None:
        destroy_process_group()
