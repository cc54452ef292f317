"""A small CNN on scikit-learn's 8x8 digits: Conv2d, ReLU, MaxPool2d, Linear, SGD."""

import json

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset

digits = load_digits()
images = torch.tensor(digits.images[:256] / 16.0, dtype=torch.float32).unsqueeze(1)
labels = torch.tensor(digits.target[:256], dtype=torch.long)
loader = DataLoader(TensorDataset(images, labels), batch_size=64, shuffle=False)

model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(16 * 2 * 2, 10))
rng = np.random.default_rng(1)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
losses = []
for _ in range(2):
    for xb, yb in loader:
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
with torch.no_grad():
    accuracy = (model(images).argmax(dim=1) == labels).float().mean().item()
print("RESULT " + json.dumps({"losses": losses, "accuracy": accuracy}))
