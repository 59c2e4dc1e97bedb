# The PyTorch side of bench/dataparallel.ts: the same two models and training step (SGD), one
# process, intra-op threads only (torch.nn.DataParallel on CPU runs its replicas one after the
# other, so intra-op threading is PyTorch's way to use the cores here). Prints JSON per model.
# argv: threads steps runs [model]: with a model name (mlp, transformer), only that model.
import json, statistics, sys, time
import torch

threads = int(sys.argv[1]); steps = int(sys.argv[2]); runs = int(sys.argv[3])
only = sys.argv[4] if len(sys.argv) > 4 else None
torch.set_num_threads(threads)
torch.manual_seed(0)

def mlp():
    m = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10))
    return m, torch.randn(64, 784), torch.randint(0, 10, (64,)), lambda o, y: torch.nn.functional.cross_entropy(o, y)

def transformer():
    layer = lambda: torch.nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0, activation="gelu", batch_first=True)
    m = torch.nn.Sequential(layer(), layer(), torch.nn.Linear(64, 16))
    y = torch.randint(0, 16, (32, 32))
    return m, torch.randn(32, 32, 64), y, lambda o, y: torch.nn.functional.cross_entropy(o.reshape(-1, 16), y.reshape(-1))

out = {}
for name, make in (("mlp", mlp), ("transformer", transformer)):
    if only is not None and name != only: continue
    model, x, y, loss_fn = make()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
    for _ in range(5): step()
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(steps): step()
        rates.append(steps / (time.perf_counter() - t0))
    out[name] = statistics.median(rates)
print(json.dumps(out))
