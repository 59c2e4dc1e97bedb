#!/usr/bin/python3
"""Writes test/fixtures/nn/training.json: PyTorch's losses over 20 training steps of two models,
from deterministic weights on deterministic batches (common.py), so that ringtorch can show it
trains the same way.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tools/nn/gen_training_fixtures.py

- "mlp": Linear(784,1024)-ReLU-Linear(1024,1024)-ReLU-Linear(1024,10), Adam(lr=1e-3), batch 64,
  cross-entropy; step s uses batch b = s % 4 (four batches, so that the loss falls):
  x = hash_tensor([64, 784], 10000 + b), y = hash_labels([64], 20000 + b, 10).
- "encoder_lm": token + position embeddings, a 2-layer post-norm TransformerEncoder (d=32, 4 heads,
  ff 64, relu, dropout 0, batch-first) under a causal mask and a key-padding mask, LayerNorm and a
  linear head; cross-entropy with label smoothing 0.1 over next tokens (padding targets -100);
  AdamW(lr=3e-3, weight_decay=0.01), clip_grad_norm_(1.0), and linear warmup (5 steps) then cosine
  to step 20 as a LambdaLR; step s uses batch s % 4 (lm_batch). It records the loss and the pre-clipping gradient norm of every step.
"""

import math

import torch
import torch.nn as nn

from common import det_init, hash_labels, hash_tensor, number, write

torch.set_num_threads(1)


def mlp():
    model = det_init(nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for s in range(20):
        x, y = hash_tensor([64, 784], 10000 + s % 4), hash_labels([64], 20000 + s % 4, 10)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(number(loss.item(), torch.float32))
    return {"losses": losses}


V, D, H, FF, T, B = 64, 32, 4, 64, 16, 4


class EncoderLM(nn.Module):
    def __init__(s):
        super().__init__()
        s.tok = nn.Embedding(V, D)
        s.pos = nn.Embedding(T, D)
        layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, batch_first=True)
        s.encoder = nn.TransformerEncoder(layer, 2)
        s.ln = nn.LayerNorm(D)
        s.head = nn.Linear(D, V)

    def forward(s, idx, pad):
        x = s.tok(idx) + s.pos(torch.arange(T))
        mask = torch.triu(torch.full((T, T), float("-inf")), 1)
        return s.head(s.ln(s.encoder(x, mask=mask, src_key_padding_mask=pad)))


def lm_batch(s):
    """Tokens, next-token targets with -100 at padding, and the padding mask (the last 3 positions of row 0)."""
    tokens = hash_labels([B, T + 1], 30000 + s, V)
    idx, tgt = tokens[:, :T].clone(), tokens[:, 1:].clone()
    pad = torch.zeros(B, T, dtype=torch.bool)
    pad[0, T - 3:] = True
    tgt[pad] = -100
    return idx, tgt, pad


def encoder_lm():
    model = det_init(EncoderLM())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    warmup, total = 5, 20

    def schedule(step):
        if step < warmup:
            return step / max(1, warmup)
        progress = (step - warmup) / max(1, total - warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * progress)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    losses, norms = [], []
    for s in range(20):
        idx, tgt, pad = lm_batch(s % 4)
        opt.zero_grad(set_to_none=True)
        logits = model(idx, pad)
        loss = nn.functional.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1), label_smoothing=0.1)
        loss.backward()
        norms.append(number(float(nn.utils.clip_grad_norm_(model.parameters(), 1.0)), torch.float32))
        opt.step()
        sched.step()
        losses.append(number(loss.item(), torch.float32))
    return {"losses": losses, "gradNorms": norms}


write("training.json", {"mlp": mlp(), "encoder_lm": encoder_lm()})
