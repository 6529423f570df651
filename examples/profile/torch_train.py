"""A small model of our own, trained for a few steps on random data (cudalens profile example (a)).

python torch_train.py [STEPS]   -- an MLP (4096 -> 4096 -> 4096 -> 1024, GELU, LayerNorm) with AdamW,
batch 2048, fp32. Each step is an NVTX range; the loss is read back every step (a synchronizing
.item(), as training loops often do).
"""

import sys
import time

import torch


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Linear(4096, 4096), torch.nn.GELU(), torch.nn.LayerNorm(4096),
        torch.nn.Linear(4096, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 1024),
    ).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(2048, 4096, device=dev)
    y = torch.randn(2048, 1024, device=dev)
    t0 = time.perf_counter()
    for step in range(steps):
        torch.cuda.nvtx.range_push(f"step {step}")
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        value = loss.item()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"{steps} steps, last loss {value:.4f}, {time.perf_counter() - t0:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
