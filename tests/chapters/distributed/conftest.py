"""Ranks fork from a server that has imported everything the rank programs use:
torch's own DDP imports torch._dynamo (seconds on 2 cores) on first use, which
every rank would otherwise pay on every launch."""

from chapters.distributed.launcher import PRELOAD

PRELOAD.append("torch._dynamo")
