"""End to end: the same MLP and CNN, the same initial weights (a torch state_dict
loaded into the engine), the same batches — the engine's loss curve follows
torch's step by step, and the MLP learns digits to > 90% test accuracy."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.autodiff import data, nn, optim
from chapters.torchcheck import assert_close

TORCH = SimpleNamespace(nn=torch.nn, optim=torch.optim, F=torch.nn.functional,
                        tensor=torch.from_numpy, no_grad=torch.no_grad)
ENGINE = SimpleNamespace(nn=nn, optim=optim, F=ad.functional, tensor=ad.tensor,
                         no_grad=ad.no_grad)


pytestmark = pytest.mark.usefixtures("one_torch_thread")



def mlp(m):
    return m.Sequential(m.Linear(64, 64), m.ReLU(), m.Linear(64, 10))


def cnn(m):
    return m.Sequential(m.Conv2d(1, 8, 3, padding=1), m.ReLU(),
                        m.Conv2d(8, 16, 3, stride=2, padding=1), m.ReLU(),
                        m.Flatten(), m.Linear(16 * 4 * 4, 10))


def train(lib, model, x, y, batches, lr):
    """One shared training loop: Adam on cross-entropy; returns the loss per step."""
    opt = lib.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for index in batches:
        opt.zero_grad()
        loss = lib.F.cross_entropy(model(lib.tensor(x[index])), lib.tensor(y[index]))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


def accuracy(lib, model, x, y) -> float:
    model.eval()
    with lib.no_grad():
        logits = model(lib.tensor(x)).numpy()
    return float((logits.argmax(axis=1) == y).mean())


def both(build, images, epochs, lr, batch_size=64):
    split = data.load_digits_split(test_fraction=0.2, seed=0, images=images)
    loader = data.DataLoader((split.x_train, split.y_train), batch_size=batch_size,
                             shuffle=True, seed=0)
    batches = [index for _ in range(epochs) for index in loader.batch_indices()]
    torch.manual_seed(0)
    reference = build(TORCH.nn)
    ours = build(ENGINE.nn)
    ours.load_state_dict(reference.state_dict())
    curves = {name: train(lib, model, split.x_train, split.y_train, batches, lr)
              for name, lib, model in [("torch", TORCH, reference), ("engine", ENGINE, ours)]}
    return split, reference, ours, curves


def test_mlp_on_digits_matches_torch_and_learns():
    split, reference, ours, curves = both(mlp, images=False, epochs=4, lr=1e-2)
    # float32 rounding differs op by op and Adam carries it through 92 steps; measured
    # gaps are ~5e-7 relative, the tolerance leaves two orders of magnitude of margin
    assert_close(curves["engine"], curves["torch"], rtol=1e-4, atol=1e-5, what="MLP loss curve")
    assert curves["engine"][-10:].mean() < 0.3 * curves["engine"][:3].mean()
    ours_acc = accuracy(ENGINE, ours, split.x_test, split.y_test)
    torch_acc = accuracy(TORCH, reference, split.x_test, split.y_test)
    assert ours_acc > 0.9, f"engine MLP test accuracy {ours_acc:.3f}"
    assert abs(ours_acc - torch_acc) <= 2 / len(split.y_test)  # at most 2 images differ
    theirs = dict(reference.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p, theirs[name], rtol=1e-3, atol=1e-4, what=f"MLP final {name}")


def test_cnn_on_digits_matches_torch():
    split, reference, ours, curves = both(cnn, images=True, epochs=2, lr=1e-2)
    assert_close(curves["engine"], curves["torch"], rtol=1e-4, atol=1e-5, what="CNN loss curve")
    assert curves["engine"][-5:].mean() < 0.5 * curves["engine"][:3].mean()
    assert accuracy(ENGINE, ours, split.x_test, split.y_test) > 0.9
