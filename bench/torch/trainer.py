# Peer of bench/trainer.ts: Hugging Face's Trainer against the PyTorch loop written by hand, on
# the same BERT sequence classifier (transformers' BertForSequenceClassification), the same
# synthetic batches and the same optimizer, schedule and clipping. Each run trains `steps` steps
# from a fresh optimizer on each side (the Trainer's setup included, as on the ringtorch side);
# the runs alternate between the two. Prints per-step milliseconds and the ratio trainer / hand.
# Needs transformers and accelerate (the Trainer's dependency).
import argparse, os, statistics, sys, tempfile, time, warnings

import torch
from torch.utils.data import DataLoader, Dataset

warnings.filterwarnings("ignore")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments, get_linear_schedule_with_warmup  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--runs", type=int, default=5)
p.add_argument("--steps", type=int, default=30)
p.add_argument("--batch", type=int, default=16)
p.add_argument("--seq", type=int, default=64)
p.add_argument("--hidden", type=int, default=128)
p.add_argument("--layers", type=int, default=2)
p.add_argument("--vocab", type=int, default=2000)
a = p.parse_args()


class Synthetic(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(5, a.vocab, (n, a.seq), generator=g)
        self.labels = torch.randint(0, 2, (n,), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(a.seq, dtype=torch.long), "labels": self.labels[i]}


torch.manual_seed(0)
config = BertConfig(vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=max(1, a.hidden // 64),
                    intermediate_size=4 * a.hidden, max_position_embeddings=a.seq, num_labels=2)
model = BertForSequenceClassification(config)
ds = Synthetic(a.steps * a.batch)


def hand():
    t0 = time.perf_counter()  # from the optimizer's creation, as Trainer.train() makes its own
    no_decay = lambda n: n.endswith("bias") or "LayerNorm." in n
    named = list(model.named_parameters())
    opt = torch.optim.AdamW([{"params": [p for n, p in named if not no_decay(n)], "weight_decay": 0.01},
                             {"params": [p for n, p in named if no_decay(n)], "weight_decay": 0.0}], lr=1e-4, eps=1e-8)
    sched = get_linear_schedule_with_warmup(opt, 2, a.steps)
    loader = DataLoader(ds, batch_size=a.batch, shuffle=True)
    model.train()
    for b in loader:
        loss = model(**b).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        loss.item()
    return (time.perf_counter() - t0) / a.steps * 1000


def trainer(out):
    args = TrainingArguments(output_dir=out, per_device_train_batch_size=a.batch, learning_rate=1e-4, weight_decay=0.01, warmup_steps=2,
                             max_steps=a.steps, max_grad_norm=1.0, save_strategy="no", eval_strategy="no", logging_steps=500,
                             report_to="none", disable_tqdm=True, use_cpu=True, dataloader_num_workers=0, seed=0,
                             optim="adamw_torch")  # the hand loop's torch.optim.AdamW, not a fused default
    t = Trainer(model=model, args=args, train_dataset=ds)
    t0 = time.perf_counter()
    t.train()
    return (time.perf_counter() - t0) / a.steps * 1000


with tempfile.TemporaryDirectory() as out:
    hand()
    trainer(out)
    hands, trainers = [], []
    for _ in range(a.runs):
        hands.append(hand())
        trainers.append(trainer(out))
hm, tm = statistics.median(hands), statistics.median(trainers)
print(f"PyTorch {torch.__version__} threads={torch.get_num_threads()} hand ms/step runs={[round(v, 2) for v in hands]}")
print(f"HF Trainer ms/step runs={[round(v, 2) for v in trainers]}")
print(f"hand_ms={hm:.3f} trainer_ms={tm:.3f} ratio={tm / hm:.4f}")
sys.stdout.flush()
