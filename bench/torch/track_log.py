# Peer for bench/track.ts: PyTorch's SummaryWriter logging 10 scalars per step (add_scalar ×10, the
# usual loop), the training thread's cost per step, median of rounds. Prints one JSON line.
#   ~/.venvs/peer/bin/python bench/torch/track_log.py DIR
import json, statistics, sys, time
from torch.utils.tensorboard import SummaryWriter

writer = SummaryWriter(sys.argv[1])
STEPS, ROUNDS = 2000, 7
per_step_us = []
step = 0
for _ in range(ROUNDS):
    t0 = time.perf_counter()
    for _ in range(STEPS):
        for k in range(10):
            writer.add_scalar(f"metric_{k}", step * 0.001 + k, step)
        step += 1
    per_step_us.append((time.perf_counter() - t0) / STEPS * 1e6)
writer.close()
print(json.dumps({"log10_us": statistics.median(per_step_us)}))
