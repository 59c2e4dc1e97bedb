# Peer of bench/gpt2.ts: Hugging Face transformers' GPT2LMHeadModel and BertForSequenceClassification
# (attn_implementation="sdpa", PyTorch's fused attention) with fused AdamW, the same configs and batches.
#   python gpt2.py train gpt2|bert   -> training tokens/s on NT threads
#   python gpt2.py ddp gpt2|bert     -> the same under DDP (gloo), 2 processes of one thread, total tokens/s
#   python gpt2.py generate on|off   -> greedy generation tokens/s, with (on) or without the KV cache
# One workload per process, so that its peak RSS is its own. One JSON line per measurement: {"what", "runs", "median", "max", "maxrss_mb"}.
import json, os, resource, statistics, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import best_opt
import torch
from transformers import BertConfig, BertForSequenceClassification, GPT2Config, GPT2LMHeadModel
from transformers.utils import logging as hf_logging
hf_logging.set_verbosity_error()

GPT2 = dict(vocab_size=50257, n_positions=256, n_embd=384, n_layer=6, n_head=6, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
BERT = dict(vocab_size=30522, hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024, max_position_embeddings=512, num_labels=2, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
B_GPT, T_GPT, B_BERT, T_BERT = 4, 256, 16, 128
RUNS, STEPS, WARMUP = int(os.environ.get("RUNS", 5)), int(os.environ.get("STEPS", 3)), int(os.environ.get("WARMUP", 2))

def build(which):
    torch.manual_seed(0)
    if which == "gpt2":
        m = GPT2LMHeadModel._from_config(GPT2Config(**GPT2), attn_implementation="sdpa")
        ids = torch.randint(0, GPT2["vocab_size"], (B_GPT, T_GPT))
        return m, (lambda mm: mm(input_ids=ids, labels=ids).loss), B_GPT * T_GPT
    m = BertForSequenceClassification._from_config(BertConfig(**BERT), attn_implementation="sdpa")
    ids = torch.randint(0, BERT["vocab_size"], (B_BERT, T_BERT)); labels = torch.randint(0, 2, (B_BERT,))
    return m, (lambda mm: mm(input_ids=ids, labels=labels).loss), B_BERT * T_BERT

def timed(step, tokens):
    for _ in range(WARMUP): step()
    res = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for _ in range(STEPS): step()
        res.append(STEPS * tokens / (time.perf_counter() - t0))
    return res

def report(what, res):
    print(json.dumps({"what": what, "runs": [round(r) for r in res], "median": statistics.median(res), "max": max(res), "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)

def train(which):
    torch.set_num_threads(int(os.environ.get("NT", "1")))
    m, loss_of, tokens = build(which); m.train()
    opt = best_opt(torch.optim.AdamW, m.parameters(), lr=1e-4)
    def step():
        opt.zero_grad(set_to_none=True); loss_of(m).backward(); opt.step()
    report(f"train {which}", timed(step, tokens))

def ddp_worker(rank, which, port, q):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    m, loss_of, tokens = build(which); m.train()
    d = DDP(m)
    opt = best_opt(torch.optim.AdamW, m.parameters(), lr=1e-4)
    def step():
        opt.zero_grad(set_to_none=True); loss_of(d).backward(); opt.step()
    res = [2 * r for r in timed(step, tokens)]
    if rank == 0: q.put((res, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    dist.destroy_process_group()

def ddp(which):
    import socket, torch.multiprocessing as mp
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    ctx = mp.get_context("spawn"); q = ctx.Queue()
    procs = [ctx.Process(target=ddp_worker, args=(r, which, port, q)) for r in range(2)]
    for p in procs: p.start()
    res, rss = q.get(timeout=1800)
    for p in procs: p.join()
    print(json.dumps({"what": f"ddp {which}", "runs": [round(r) for r in res], "median": statistics.median(res), "max": max(res), "maxrss_mb": rss}), flush=True)

def generate(cache):
    global STEPS
    torch.set_num_threads(int(os.environ.get("NT", "1")))
    torch.manual_seed(0)
    m = GPT2LMHeadModel._from_config(GPT2Config(**GPT2), attn_implementation="sdpa").eval()
    prompt = torch.tensor([[(i * 1009) % GPT2["vocab_size"] for i in range(32)]]); new = 64  # bench/gpt2.ts's prompt
    def step():
        with torch.no_grad():
            m.generate(prompt, max_new_tokens=new, min_new_tokens=new, do_sample=False, use_cache=cache, pad_token_id=0)
    STEPS = 1
    report(f"generate cache={'on' if cache else 'off'}", timed(step, new))

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "train": train(sys.argv[2])
    elif mode == "ddp": ddp(sys.argv[2])
    elif mode == "generate" and sys.argv[2] in ("on", "off"): generate(sys.argv[2] == "on")
    else: sys.exit(f"gpt2.py: expected train gpt2|bert, ddp gpt2|bert or generate on|off, got {' '.join(sys.argv[1:])}")
