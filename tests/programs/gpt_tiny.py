"""A tiny GPT: token + position embedding, causal self-attention, GELU MLP,
LayerNorm, tied input/output embedding, AdamW, a few steps on a short text."""

import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = "the cat sat on the mat and the dog sat on the log. " * 4
VOCAB = sorted(set(TEXT))
DATA = torch.tensor([VOCAB.index(c) for c in TEXT], dtype=torch.long)
BLOCK, EMBED, HEADS = 16, 32, 4


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(EMBED, 3 * EMBED)
        self.proj = nn.Linear(EMBED, EMBED)
        self.register_buffer("mask", torch.tril(torch.ones(BLOCK, BLOCK)).view(1, 1, BLOCK, BLOCK))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(EMBED, dim=2)
        q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / (C // HEADS) ** 0.5
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(EMBED), nn.LayerNorm(EMBED)
        self.attn = CausalSelfAttention()
        self.mlp = nn.Sequential(nn.Linear(EMBED, 4 * EMBED), nn.GELU(),
                                 nn.Linear(4 * EMBED, EMBED))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(len(VOCAB), EMBED)
        self.pos = nn.Embedding(BLOCK, EMBED)
        self.blocks = nn.Sequential(Block(), Block())
        self.ln_f = nn.LayerNorm(EMBED)
        self.head = nn.Linear(EMBED, len(VOCAB), bias=False)
        self.head.weight = self.tok.weight  # weight tying

    def forward(self, idx, targets):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T))
        logits = self.head(self.ln_f(self.blocks(x)))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


model = GPT()
rng = np.random.default_rng(0)
with torch.no_grad():
    for name, p in model.named_parameters():
        scale = 1.0 if "ln" in name and "weight" in name else 0.02
        values = rng.standard_normal(tuple(p.shape)).astype(np.float32) * scale
        p.copy_(torch.from_numpy(values + (1.0 if scale == 1.0 else 0.0)))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
starts = [0, 17, 40, 63, 90, 120]
x = torch.stack([DATA[s:s + BLOCK] for s in starts])
y = torch.stack([DATA[s + 1:s + BLOCK + 1] for s in starts])
losses = []
for _ in range(5):
    loss = model(x, y)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss.item())
print("RESULT " + json.dumps({"losses": losses,
                              "tied": model.head.weight is model.tok.weight,
                              "n_params": sum(p.numel() for p in model.parameters())}))
