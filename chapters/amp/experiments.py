"""The chapter's training comparison: one model, four precision recipes.

* ``"float32"`` — the reference;
* ``"float16"`` — pure half precision: float16 parameters, gradients and
  updates, no loss scaling (what the source's first pitfall warns against);
* ``"float16 static scale"`` — float16 model, float32 master weights, a fixed
  loss scale (1024 in the source text's example);
* ``"amp"`` — float32 model under :class:`~chapters.amp.autocast.autocast`
  (``"cpu"``, float16), with the dynamic :class:`~chapters.amp.scaler.GradScaler`:
  the float32 parameters are the master weights.

The model is a small tanh MLP (3 hidden layers of 32) on scikit-learn's 8x8
digits. Its gradients are around 1e-3 — far from float16's limits — whereas a
large model's are not: a language model averages its loss over ~10**6
tokens, and the mixed precision paper found most activation gradients below
``2**-14``, many below ``2**-24``.
To put our gradients where theirs are, the loss is multiplied by
``loss_weight = 2**-16`` and the learning rate divided by it. That is an
identity in exact arithmetic and in float32 (a power of two only shifts
exponents, and float32's range is wide), so any difference between the recipes
comes from float16's range and precision alone.

Every ``probe_every`` steps a float32 gradient at the same weights is computed
too; the *underflow fraction* is the share of its non-zero entries that are
exactly zero in the recipe's own (unscaled) gradient.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import chapters.autodiff.functional as F
from chapters.amp.autocast import autocast
from chapters.amp.master import MasterWeights
from chapters.amp.scaler import GradScaler
from chapters.autodiff import nn, no_grad, optim, tensor
from chapters.autodiff.data import load_digits_split

RECIPES = ("float32", "float16", "float16 static scale", "amp")


@dataclass
class RunResult:
    recipe: str
    losses: list[float] = field(default_factory=list)
    underflow: dict[int, float] = field(default_factory=dict)   # step -> fraction
    scales: list[float] = field(default_factory=list)           # loss scale used per step
    skipped_steps: list[int] = field(default_factory=list)      # steps with inf/NaN gradients
    gradients: dict[str, np.ndarray] = field(default_factory=dict)  # first step's, flattened
    train_loss: float = float("nan")      # float32 loss of the final weights on all training data
    test_accuracy: float = float("nan")   # of the final weights on the held-out digits

    @property
    def final_loss(self) -> float:
        """Mean minibatch loss of the last 10 steps."""
        return float(np.mean(self.losses[-10:]))


def build_mlp(depth: int = 3, width: int = 32, gain: float = 1.0, seed: int = 0):
    """``depth`` tanh layers of ``width`` units between 64 inputs and 10 classes;
    weights ``N(0, gain**2 / fan_in)``, zero biases (float32, engine nn)."""
    rng = np.random.default_rng(seed)
    layers, fan_in = [], 64
    for _ in range(depth):
        layers += [nn.Linear(fan_in, width), nn.Tanh()]
        fan_in = width
    layers.append(nn.Linear(fan_in, 10))
    model = nn.Sequential(*layers)
    for module in model.modules():
        if isinstance(module, nn.Linear):
            std = gain / np.sqrt(module.in_features)
            module.weight.data[...] = rng.normal(0, std, module.weight.shape)
            module.bias.data[...] = 0
    return model


def _flat_grads(params) -> np.ndarray:
    return np.concatenate([np.zeros(p.data.size, np.float32) if p.grad is None
                           else p.grad.data.astype(np.float32).ravel() for p in params])


def _reference_grads(probe, params, x, y, loss_weight: float) -> np.ndarray:
    """float32 gradients of the weighted loss at ``params``' current values,
    computed on ``probe`` (a float32 model of the same architecture)."""
    probe_params = list(probe.parameters())
    for p, q in zip(probe_params, params, strict=True):
        p.data[...] = q.data.astype(np.float32)
        p.grad = None
    (F.cross_entropy(probe(tensor(x)), tensor(y)) * loss_weight).backward()
    return _flat_grads(probe_params)


def _underflow_fraction(own: np.ndarray, reference: np.ndarray) -> float:
    nonzero = reference != 0
    return float(np.mean(own[nonzero] == 0)) if nonzero.any() else 0.0


def train(recipe: str, steps: int = 120, lr: float = 0.5, batch_size: int = 128,
          depth: int = 3, width: int = 32, loss_weight: float = 2.0**-16,
          static_scale: float = 1024.0, init_scale: float | None = None,
          growth_interval: int = 25, probe_every: int = 5, seed: int = 0) -> RunResult:
    """Train :func:`build_mlp` on digits for ``steps`` SGD steps with ``recipe``
    (``lr`` is the learning rate of the unweighted loss). The dynamic scaler
    starts at ``init_scale``, by default torch's ``2**16`` divided by
    ``loss_weight``: the same starting point relative to the gradients."""
    if recipe not in RECIPES:
        raise ValueError(f"train: unknown recipe {recipe!r}; choose one of {RECIPES}")
    x_all, y_all, x_test, y_test = load_digits_split(seed=seed)
    rng = np.random.default_rng(seed)
    model = build_mlp(depth, width, seed=seed)
    probe = build_mlp(depth, width, seed=seed)
    params = list(model.parameters())
    masters = None
    if recipe in ("float16", "float16 static scale"):
        model.half()
    if recipe == "float16 static scale":
        masters = MasterWeights(params)
        opt = optim.SGD(masters.parameters(), lr=lr / loss_weight)
    else:
        opt = optim.SGD(params, lr=lr / loss_weight)
    init_scale = 2.0**16 / loss_weight if init_scale is None else init_scale
    scaler = GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval,
                        enabled=recipe == "amp")
    result = RunResult(recipe)
    for step in range(steps):
        index = rng.choice(len(x_all), batch_size, replace=False)
        x_np, y_np = x_all[index], y_all[index]
        dtype = np.float16 if recipe in ("float16", "float16 static scale") else np.float32
        x, y = tensor(x_np.astype(dtype)), tensor(y_np)
        with autocast("cpu", dtype="float16", enabled=recipe == "amp"):
            loss = F.cross_entropy(model(x), y) * loss_weight
        scale = {"amp": scaler.get_scale(), "float16 static scale": static_scale}.get(recipe, 1.0)
        result.scales.append(scale)
        if recipe == "amp":
            with np.errstate(over="ignore", invalid="ignore"):  # expected; the scaler detects it
                scaler.scale(loss).backward()
        else:
            (loss * scale if scale != 1.0 else loss).backward()
        if step % probe_every == 0:
            own = _flat_grads(params) / np.float32(scale)
            reference = _reference_grads(probe, params, x_np, y_np, loss_weight)
            result.underflow[step] = _underflow_fraction(own, reference)
            if step == 0:
                result.gradients = {"float32": reference, "scaled": _flat_grads(params)}
        result.losses.append(float(loss.item()) / loss_weight)
        if recipe == "amp":
            scaler.step(opt)
            if scaler.found_inf(opt):
                result.skipped_steps.append(step)
            scaler.update()
        elif masters is not None:
            masters.copy_grads_to_masters()
            for m in masters.parameters():
                m.grad.data[...] /= np.float32(scale)
            if not all(np.isfinite(m.grad.data).all() for m in masters.parameters()):
                result.skipped_steps.append(step)  # a static scale cannot react: it steps on
            opt.step()
            masters.copy_masters_to_model()
        else:
            opt.step()
        opt.zero_grad()
        model.zero_grad()
    for p, q in zip(probe.parameters(), params, strict=True):
        p.data[...] = q.data.astype(np.float32)
    with no_grad():
        result.train_loss = float(F.cross_entropy(probe(tensor(x_all)), tensor(y_all)).item())
        predictions = probe(tensor(x_test)).numpy().argmax(axis=1)
    result.test_accuracy = float(np.mean(predictions == y_test))
    return result


def compare(steps: int = 150, **kwargs) -> dict[str, RunResult]:
    """:func:`train` with every recipe, same data order and initial weights."""
    return {recipe: train(recipe, steps=steps, **kwargs) for recipe in RECIPES}
