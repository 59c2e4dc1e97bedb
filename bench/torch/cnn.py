# The PyTorch side of bench/cnn.ts: the same network, optimizer, batch and protocol.
import os as _os, sys as _sys
_sys.path.insert(0, _os.path.dirname(_os.path.abspath(__file__)))
from common import best_opt
import argparse, os, statistics, time
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--runs", type=int, default=5)
p.add_argument("--steps", type=int, default=20)
p.add_argument("--batch", type=int, default=128)
a = p.parse_args()
torch.set_num_threads(int(os.environ.get("NT", "1")))
torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10),
)
opt = best_opt(torch.optim.Adam, model.parameters(), lr=1e-3)
lossf = nn.CrossEntropyLoss()
x = torch.randn(a.batch, 1, 28, 28)
y = torch.randint(0, 10, (a.batch,))


def step():
    opt.zero_grad(set_to_none=True)
    loss = lossf(model(x), y)
    loss.backward()
    opt.step()


for _ in range(3):
    step()
res = []
for r in range(a.runs):
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    res.append(a.steps * a.batch / (time.perf_counter() - t0))
print(f"CNN torch threads={torch.get_num_threads()} samples/s runs={[round(v) for v in res]} median={statistics.median(res):.0f} max={max(res):.0f}")
