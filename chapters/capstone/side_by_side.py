"""Both loops on the same real processes, in one :func:`chapters.distributed.launcher.launch`.

Each rank trains the engine model and then the PyTorch model, for every
configuration asked for, on identical batches from identical weights; starting
processes, importing torch and warming up its kernels is paid once. A curve is
the mean over ranks of each rank's local loss, i.e. the loss of the global batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import engine_loop, torch_loop
from .recipe import LoopConfig, digits


@dataclass
class RunResult:
    """One framework's run: the global-batch loss per step, the loss scale
    before each step, the skipped steps, and every rank's final weights."""

    loss: np.ndarray
    scale: np.ndarray
    skipped: np.ndarray
    weights: list[dict]

    def replica_spread(self) -> float:
        """Largest difference of any weight between rank 0 and another rank
        (0.0 when the replicas agree exactly, as synchronised training must)."""
        first = self.weights[0]
        return max((float(np.max(np.abs(w[k] - first[k]))) for w in self.weights[1:]
                    for k in first), default=0.0)


TRAINERS = {"engine": engine_loop.train, "torch": torch_loop.train}


def _session(group, jobs, data_by_seed, p2p_sizes) -> dict:
    out = {label: {name: TRAINERS[name](group, config, data_by_seed[config.seed])
                   for name in frameworks}
           for label, (config, frameworks) in jobs.items()}
    if p2p_sizes:
        from chapters.distributed.cost_model import measure_p2p

        out["_p2p_seconds"] = measure_p2p(group, p2p_sizes)
    return out


def _collect(runs: list[dict]) -> RunResult:
    return RunResult(loss=np.mean([r["loss"] for r in runs], axis=0),
                     scale=np.asarray(runs[0]["scale"]),
                     skipped=np.asarray(runs[0]["skipped"]),
                     weights=[r["weights"] for r in runs])


def run_many(configs: dict[str, LoopConfig], world_size: int = 2,
             frameworks=("engine", "torch"), p2p_sizes=(), timeout: float = 180.0) -> dict:
    """``{label: {"engine": RunResult, "torch": RunResult}}`` for every config, all
    trained in one launch of ``world_size`` processes. With ``p2p_sizes`` (bytes)
    the ranks also time point-to-point messages (for the alpha-beta model):
    ``result["_p2p_seconds"]``."""
    from chapters.distributed.launcher import launch

    jobs = {label: (config, tuple(frameworks)) for label, config in configs.items()}
    data = {config.seed: digits(config.seed) for config in configs.values()}
    per_rank = launch(_session, world_size, jobs, data, tuple(p2p_sizes), timeout=timeout)
    result = {label: {name: _collect([r[label][name] for r in per_rank]) for name in frameworks}
              for label in configs}
    if p2p_sizes:
        result["_p2p_seconds"] = per_rank[0]["_p2p_seconds"]
    return result


def run(config: LoopConfig, world_size: int = 2, frameworks=("engine", "torch"),
        timeout: float = 180.0) -> dict[str, RunResult]:
    """One config: ``{"engine": RunResult, "torch": RunResult}``."""
    return run_many({"run": config}, world_size, frameworks, timeout=timeout)["run"]
