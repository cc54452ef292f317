"""A character-level GPT, written once against torch's names and built on either
library: ``build(torch, config)`` with real ``torch`` or with ``chapters.as_torch``
(the course's four engines under torch's names).

The model, in one forward pass of ``idx`` (B, T) token ids::

    x = tok_emb[idx] + pos_emb[0..T)                       # (B, T, d)
    for each block:
        x = x + proj(attention(ln1(x)))                    # causal: position t sees <= t
        x = x + fc2(gelu(fc1(ln2(x))))                     # the MLP, 4d wide (GPT-2's
                                                           #   tanh form of GELU)
    logits = ln_f(x) @ tok_emb.T                           # weight tying: one matrix
    loss = cross_entropy(logits, next tokens)

Attention runs two ways that must agree: ``F.scaled_dot_product_attention(q, k, v,
is_causal=True)``, or spelled out, ``softmax(q k^T / sqrt(d_head) + mask) v`` with
``-inf`` above the diagonal. Starting weights come from numpy (normal, std 0.02;
LayerNorm weight 1, biases 0), so both libraries start from the same numbers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np

ATTENTION = ("sdpa", "explicit")
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class GPTConfig:
    """The model and its training run. ``batch`` sequences of ``block`` tokens per
    micro-batch and rank; ``accumulate`` micro-batches per step; the global batch of
    a step is ``batch * accumulate * world_size`` sequences."""

    block: int = 32
    layers: int = 2
    heads: int = 4
    width: int = 64
    attention: str = "sdpa"
    steps: int = 40
    batch: int = 8
    accumulate: int = 2
    lr: float = 3e-3
    warmup: int = 4
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.1
    clip_norm: float = 1.0
    amp_dtype: str = "bfloat16"   # "float32" (off), "bfloat16", or "float16" (with GradScaler)
    seed: int = 0

    def __post_init__(self):
        if self.attention not in ATTENTION:
            raise ValueError(f"GPTConfig.attention must be one of {ATTENTION}, "
                             f"got {self.attention!r}")
        if self.amp_dtype not in ("float32", "bfloat16", "float16"):
            raise ValueError("GPTConfig.amp_dtype must be 'float32', 'bfloat16' or 'float16', "
                             f"got {self.amp_dtype!r}")
        if self.width % self.heads:
            raise ValueError(f"width {self.width} does not split into {self.heads} heads: "
                             "choose a width that is a multiple of heads")

    def but(self, **changes) -> GPTConfig:
        return replace(self, **changes)


# ------------------------------------------------------------------------ the text

@cache
def corpus() -> str:
    """The course's own English chapters, their prose only (markdown cells): text
    that ships with the course, so nothing is downloaded. Characters outside
    printable ASCII (the Chinese glosses, maths symbols) become ``~``. The notebooks
    are read as the JSON they are stored as (nbformat 4: a cell's source is a list
    of lines), which takes milliseconds where a validating reader takes a second."""
    parts = []
    for path in sorted((ROOT / "chapters").glob("0[0-5]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        parts += ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    text = "\n\n".join(parts)
    return "".join(ch if ch == "\n" or " " <= ch <= "}" else "~" for ch in text)


@cache
def vocabulary() -> str:
    return "".join(sorted(set(corpus())))


def encode(text: str) -> np.ndarray:
    index = {ch: i for i, ch in enumerate(vocabulary())}
    unknown = index["~"]
    return np.array([index.get(ch, unknown) for ch in text], dtype=np.int64)


def decode(ids) -> str:
    chars = vocabulary()
    return "".join(chars[int(i)] for i in ids)


@cache
def splits() -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) token ids: the last tenth of the text is held out."""
    ids = encode(corpus())
    cut = int(0.9 * len(ids))
    return ids[:cut], ids[cut:]


def batch_at(config: GPTConfig, step: int, micro: int, rank: int, world_size: int,
             ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rank ``rank``'s micro-batch ``micro`` of step ``step``: (x, y), each (batch, block),
    y shifted by one. Start positions are drawn from ``[seed, step, micro, rank]``, so
    any framework, and a resumed run, sees the same data in the same order."""
    ids = splits()[0] if ids is None else ids
    rng = np.random.default_rng([config.seed, step, micro, rank, world_size])
    starts = rng.integers(0, len(ids) - config.block - 1, size=config.batch)
    x = np.stack([ids[s:s + config.block] for s in starts])
    y = np.stack([ids[s + 1:s + config.block + 1] for s in starts])
    return x, y


def autocast_dtype(torch, config: GPTConfig):
    """The dtype of library ``torch`` that the step's autocast uses, or None when
    ``config.amp_dtype`` is float32 (autocast off)."""
    return None if config.amp_dtype == "float32" else getattr(torch, config.amp_dtype)


def learning_rate(config: GPTConfig, step: int) -> float:
    """Linear warm-up to ``lr`` over ``warmup`` steps, then a cosine down to
    ``min_lr_ratio * lr`` at the last step."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - 1 - config.warmup)
    floor = config.min_lr_ratio * config.lr
    return floor + 0.5 * (config.lr - floor) * (1 + math.cos(math.pi * min(1.0, progress)))


# ------------------------------------------------------------------------ the model

def build(torch, config: GPTConfig):
    """The GPT as a ``torch.nn.Module`` of library ``torch`` (real or the engines'),
    with the starting weights of :func:`starting_weights`."""
    nn, F = torch.nn, torch.nn.functional
    d, heads, vocab = config.width, config.heads, len(vocabulary())

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            mask = torch.full((config.block, config.block), float("-inf")).triu(1)
            self.register_buffer("mask", mask, persistent=False)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2)
                       for t in self.qkv(x).split(C, dim=2))
            if config.attention == "sdpa":
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                scores = q @ k.transpose(-2, -1) / math.sqrt(C // heads)
                y = F.softmax(scores + self.mask[:T, :T], dim=-1) @ v
            return self.proj(y.transpose(1, 2).reshape(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attn, self.ln2 = nn.LayerNorm(d), CausalSelfAttention(), nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(config.block, d)
            self.blocks = nn.ModuleList(Block() for _ in range(config.layers))
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.head.weight = self.tok.weight  # weight tying

        def forward(self, idx, targets=None):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], dtype=torch.long))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            if targets is None:
                return logits
            return F.cross_entropy(logits.reshape(-1, vocab).float(), targets.reshape(-1))

    model = GPT()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(starting_weights(config)[name]))
    return model


def parameter_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, as ``named_parameters()`` lists them (the
    tied head weight appears once, as ``tok.weight``)."""
    d, vocab = config.width, len(vocabulary())
    shapes = {"tok.weight": (vocab, d), "pos.weight": (config.block, d)}
    for i in range(config.layers):
        b = f"blocks.{i}."
        shapes.update({b + "ln1.weight": (d,), b + "ln1.bias": (d,),
                       b + "attn.qkv.weight": (3 * d, d), b + "attn.qkv.bias": (3 * d,),
                       b + "attn.proj.weight": (d, d), b + "attn.proj.bias": (d,),
                       b + "ln2.weight": (d,), b + "ln2.bias": (d,),
                       b + "mlp.0.weight": (4 * d, d), b + "mlp.0.bias": (4 * d,),
                       b + "mlp.2.weight": (d, 4 * d), b + "mlp.2.bias": (d,)})
    shapes.update({"ln_f.weight": (d,), "ln_f.bias": (d,)})
    return shapes


@cache
def starting_weights(config: GPTConfig) -> dict[str, np.ndarray]:
    """float32 arrays: normal(0, 0.02) for matrices and embeddings, LayerNorm
    weights 1, biases 0, drawn from ``config.seed``."""
    rng = np.random.default_rng(config.seed)
    weights = {}
    for name, shape in parameter_shapes(config).items():
        if name.endswith("bias"):
            weights[name] = np.zeros(shape, np.float32)
        elif ".ln" in name or name.startswith("ln"):
            weights[name] = np.ones(shape, np.float32)
        else:
            weights[name] = (0.02 * rng.standard_normal(shape)).astype(np.float32)
    return weights


def optimizer(torch, model, config: GPTConfig):
    """AdamW with decoupled weight decay on the matrices and embeddings (>= 2-D)
    only; LayerNorm weights and biases are not decayed."""
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": config.weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.lr, betas=(0.9, 0.95))


def generate(torch, model, config: GPTConfig, prompt: str, length: int,
             temperature: float = 0.8, seed: int = 0) -> str:
    """``prompt`` and ``length`` more characters, each sampled from the model's
    softmax at ``temperature`` (numpy draws the samples, so both libraries, given
    the same weights, write the same text)."""
    rng = np.random.default_rng(seed)
    ids = list(encode(prompt))
    with torch.no_grad():
        for _ in range(length):
            context = torch.tensor([ids[-config.block:]], dtype=torch.long)
            logits = model(context)[0, -1].float().numpy().astype(np.float64) / temperature
            p = np.exp(logits - logits.max())
            ids.append(int(rng.choice(len(p), p=p / p.sum())))
    return decode(ids)
