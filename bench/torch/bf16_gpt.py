# Peer of bench/bf16_gpt.ts: the GPT of gpt.py trained STEPS steps in float32 and under
# torch.autocast("cpu", dtype=torch.bfloat16), on the same 4 fixed batches, from the same weights.
import os as _os, sys as _sys
_sys.path.insert(0, _os.path.dirname(_os.path.abspath(__file__)))
from common import best_opt
import copy, os, time
import torch, torch.nn as nn
torch.set_num_threads(int(os.environ.get("NT", "1"))); torch.manual_seed(0)
V, D, H, L, T, B = 8192, 256, 4, 4, 128, 8
STEPS, WARMUP = int(os.environ.get("STEPS", "300")), 3
class GPT(nn.Module):
    def __init__(s):
        super().__init__()
        s.tok = nn.Embedding(V, D); s.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, H, 4*D, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        s.blocks = nn.TransformerEncoder(layer, L)
        s.ln = nn.LayerNorm(D); s.head = nn.Linear(D, V, bias=False)
        s.register_buffer("mask", torch.triu(torch.full((T, T), float("-inf")), 1))
    def forward(s, idx):
        x = s.tok(idx) + s.pos(torch.arange(T))
        x = s.blocks(x, mask=s.mask)
        return s.head(s.ln(x))
base = GPT()
batches = [(torch.randint(0, V, (B, T)), torch.randint(0, V, (B * T,))) for _ in range(4)]
def train(low):
    m = copy.deepcopy(base); opt = best_opt(torch.optim.AdamW, m.parameters(), lr=3e-4); losses = []
    for i in range(STEPS):
        if i == WARMUP: t0 = time.perf_counter()
        idx, tgt = batches[i % 4]
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=low):
            logits = m(idx).view(-1, V)
        loss = nn.functional.cross_entropy(logits.float(), tgt); loss.backward(); opt.step()
        losses.append(loss.item())
    rate = (STEPS - WARMUP) * B * T / (time.perf_counter() - t0)
    return rate, sum(losses[-10:]) / len(losses[-10:])
for name, low in (("fp32", False), ("bf16", True)):
    rate, loss = train(low)
    print(f"{name} tokens/s={rate:.0f} final_loss={loss:.4f}")
