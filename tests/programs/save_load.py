"""torch.save / torch.load round trips: a model's and an optimizer's state_dict,
then training resumes from the loaded copy exactly as the original continues."""

import json
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))


rng = np.random.default_rng(4)
x = torch.from_numpy(rng.standard_normal((10, 3)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((10, 2)).astype(np.float32))
model = make_model()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
opt = torch.optim.Adam(model.parameters(), lr=0.05)


def step(m, o):
    loss = nn.functional.mse_loss(m(x), y)
    o.zero_grad()
    loss.backward()
    o.step()
    return loss.item()


first = [step(model, opt) for _ in range(3)]
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": 3}, path)
    checkpoint = torch.load(path, weights_only=True)
copy = make_model()
copy.load_state_dict(checkpoint["model"])
copy_opt = torch.optim.Adam(copy.parameters(), lr=0.05)
copy_opt.load_state_dict(checkpoint["optimizer"])
same_weights = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(),
                                                     copy.state_dict().values(), strict=True))
original = [step(model, opt) for _ in range(3)]
resumed = [step(copy, copy_opt) for _ in range(3)]
print("RESULT " + json.dumps({"losses": first + original, "resumed": resumed,
                              "same_weights": same_weights, "step": checkpoint["step"]}))
