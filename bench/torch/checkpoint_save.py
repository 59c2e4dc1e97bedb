# Peer for bench/checkpoint.ts: torch.save of a ~100 MB state dict, the time the caller is blocked
# (torch.save is synchronous), without and with an fsync so that it compares with a durable save.
# Prints one JSON line. Run with Debian's interpreter: /usr/bin/python3 bench/torch/checkpoint_save.py DIR
import json, os, statistics, sys, time
import torch

torch.set_num_threads(1)
out_dir = sys.argv[1]
layers = int(os.environ.get("LAYERS", "5"))
width = int(os.environ.get("WIDTH", "2236"))
model = torch.nn.Sequential(*[torch.nn.Linear(width, width, bias=False) for _ in range(layers)])
path = os.path.join(out_dir, "torch_model.pt")
plain, durable = [], []
for _ in range(5):
    t0 = time.perf_counter()
    torch.save(model.state_dict(), path)
    plain.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    with open(path, "wb") as f:
        torch.save(model.state_dict(), f)
        f.flush()
        os.fsync(f.fileno())
    durable.append(time.perf_counter() - t0)
os.unlink(path)
mb = sum(p.numel() * 4 for p in model.parameters()) / 1e6
print(json.dumps({"mb": mb, "save_ms": statistics.median(plain) * 1e3, "save_fsync_ms": statistics.median(durable) * 1e3}))
