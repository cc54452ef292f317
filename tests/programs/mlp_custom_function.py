"""An MLP whose activation is a custom torch.autograd.Function (a scaled
softplus with a hand-written backward), trained with Adam."""

import json

import numpy as np
import torch
import torch.nn as nn


class ScaledSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        return torch.log1p(torch.exp(beta * x)) / beta

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * torch.sigmoid(ctx.beta * x), None


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 16), nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(ScaledSoftplus.apply(self.fc1(x), 2.0))


rng = np.random.default_rng(2)
x = torch.from_numpy(rng.standard_normal((32, 4)).astype(np.float32))
y = (x ** 2).sum(dim=1, keepdim=True)
model = MLP()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.4))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for _ in range(8):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("RESULT " + json.dumps({"losses": losses,
                              "fc1_grad_norm": model.fc1.weight.grad.norm().item()}))
