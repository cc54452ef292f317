"""Mixed precision on a real GPU: speed, memory and autocast dtypes.

Run on a CUDA machine: ``python bench/amp_cuda_check.py``. It prints, for a
matmul-heavy torch MLP, the time per training step and the peak memory of
float16 and bfloat16 autocast relative to float32 (ratios < 1 are savings),
then checks that torch.autocast("cuda") puts softmax, layer_norm, sum, exp and
the losses in float32 while matmul/linear run in float16 — the CUDA policy
that differs from the CPU one. Exits 0 with a message where there is no GPU.
"""

from __future__ import annotations

import sys
import time

import torch
import torch.nn.functional as F


def make_model(width: int, depth: int) -> torch.nn.Module:
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 10)).cuda()


def time_steps(dtype, width: int, depth: int, batch: int, steps: int) -> tuple[float, int]:
    """Seconds per training step and peak bytes, under autocast(dtype) or float32."""
    torch.manual_seed(0)
    model = make_model(width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda", enabled=dtype is torch.float16)
    x = torch.randn(batch, width, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / steps, torch.cuda.max_memory_allocated()


def autocast_dtypes() -> dict[str, torch.dtype]:
    x = torch.randn(8, 16, device="cuda")
    w = torch.randn(4, 16, device="cuda")
    target = torch.randint(0, 4, (8,), device="cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        logits = F.linear(x, w)
        return {"linear": logits.dtype, "matmul": (x @ w.T).dtype,
                "softmax": F.softmax(logits, -1).dtype,
                "log_softmax": F.log_softmax(logits, -1).dtype,
                "layer_norm": F.layer_norm(logits, (4,)).dtype, "sum": logits.sum().dtype,
                "exp": logits.exp().dtype, "relu": F.relu(logits).dtype,
                "cross_entropy": F.cross_entropy(logits, target).dtype,
                "mse_loss": F.mse_loss(logits, logits).dtype}


EXPECTED_CUDA = {"linear": torch.float16, "matmul": torch.float16, "softmax": torch.float32,
                 "log_softmax": torch.float32, "layer_norm": torch.float32,
                 "sum": torch.float32, "exp": torch.float32, "relu": torch.float16,
                 "cross_entropy": torch.float32, "mse_loss": torch.float32}


def main() -> int:
    if not torch.cuda.is_available():
        print("amp_cuda_check: no CUDA GPU visible to torch; nothing to measure (exit 0).")
        return 0
    print(f"device: {torch.cuda.get_device_name()} (torch {torch.__version__})")
    width, depth, batch, steps = 4096, 6, 2048, 20
    base_t, base_m = time_steps(None, width, depth, batch, steps)
    print(f"float32: {base_t * 1e3:.2f} ms/step, peak {base_m / 2**20:.0f} MiB "
          f"(TF32 matmul allowed: {torch.backends.cuda.matmul.allow_tf32})")
    for dtype in (torch.float16, torch.bfloat16):
        t, m = time_steps(dtype, width, depth, batch, steps)
        print(f"{str(dtype):15s} autocast: {t * 1e3:.2f} ms/step, time ratio vs fp32 "
              f"{t / base_t:.2f}, peak memory ratio {m / base_m:.2f}")
    got = autocast_dtypes()
    wrong = {k: (v, EXPECTED_CUDA[k]) for k, v in got.items() if v != EXPECTED_CUDA[k]}
    for name, dtype in got.items():
        print(f"autocast('cuda', float16) {name:14s} -> {dtype}")
    if wrong:
        print(f"UNEXPECTED autocast dtypes: {wrong}")
        return 1
    print("CUDA autocast dtypes as expected.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
