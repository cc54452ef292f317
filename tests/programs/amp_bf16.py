"""Mixed precision on the CPU: torch.amp.autocast("cpu", bfloat16) and a GradScaler."""

import json

import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(3)
x = torch.from_numpy(rng.standard_normal((16, 8)).astype(np.float32))
y = torch.from_numpy(rng.standard_normal((16, 4)).astype(np.float32))
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
losses, dtypes = [], []
for _ in range(4):
    with torch.amp.autocast(device_type="cpu", dtype=torch.bfloat16):
        out = model(x)
        loss = nn.functional.mse_loss(out.float(), y)
    dtypes.append(str(out.dtype).removeprefix("torch."))
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    losses.append(loss.item())
print("RESULT " + json.dumps({"losses": losses, "out_dtype": dtypes[0],
                              "scale": scaler.get_scale(),
                              "grad_dtype": str(model[0].weight.grad.dtype).removeprefix(
                                  "torch.")}))
