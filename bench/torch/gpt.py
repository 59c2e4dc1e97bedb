import os as _os, sys as _sys
_sys.path.insert(0, _os.path.dirname(_os.path.abspath(__file__)))
from common import best_opt
import os, time, statistics
import torch, torch.nn as nn
# On PyTorch 2.x nn.MultiheadAttention (need_weights=False, as TransformerEncoderLayer calls it) runs
# scaled_dot_product_attention; AdamW is fused where the version has it (best_opt).
torch.set_num_threads(int(os.environ.get("NT", "1"))); torch.manual_seed(0)
V, D, H, L, T, B = 8192, 256, 4, 4, 128, 8
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
m = GPT(); nparams = sum(p.numel() for p in m.parameters()) - V*D - T*D  # non-embedding (head kept)
opt = best_opt(torch.optim.AdamW, m.parameters(), lr=3e-4)
idx = torch.randint(0, V, (B, T)); tgt = torch.randint(0, V, (B, T))
def step():
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(m(idx).view(-1, V), tgt.view(-1)); loss.backward(); opt.step()
for _ in range(3): step()
res = []
for r in range(5):
    steps = 10; t0 = time.perf_counter()
    for _ in range(steps): step()
    res.append(steps * B * T / (time.perf_counter() - t0))
print(f"GPT L={L} D={D} H={H} T={T} V={V} B={B} nonemb_params={nparams/1e6:.2f}M tokens/s runs={[round(v) for v in res]} median={statistics.median(res):.0f} max={max(res):.0f} min={min(res):.0f}; approx model GFLOPS(6*N*tok, median)={6*nparams*statistics.median(res)/1e9:.1f}")
