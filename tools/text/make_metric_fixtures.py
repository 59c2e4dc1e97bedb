"""Reference values for test/metrics: scikit-learn, sacrebleu and rapidfuzz on fixed inputs.

    ~/.venvs/peer/bin/python tools/text/make_metric_fixtures.py
    (pip install sacrebleu rapidfuzz into the peer venv first)
"""
import json
import random

import sacrebleu
from rapidfuzz.distance import Levenshtein
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

rng = random.Random(0)
OUT = "test/fixtures/text/metrics.expected.json"


def labels(n, k, skew):
    t = [rng.randrange(k) for _ in range(n)]
    # Predictions right with probability skew, else a random class (class k-1 never predicted in
    # the 4-class case, so macro averages over a class with no predictions).
    p = [x if rng.random() < skew else rng.randrange(max(2, k - 1)) for x in t]
    return p, t


def prf(p, t, average, k):
    kw = {"average": average, "zero_division": 0}
    if average == "binary":
        kw["pos_label"] = 1
    pr, rc, f1, _ = precision_recall_fscore_support(t, p, **kw)
    return {"precision": pr, "recall": rc, "f1": f1}


cls = []
for n, k, skew in [(101, 2, 0.7), (257, 3, 0.6), (64, 4, 0.5), (7, 2, 0.0)]:
    p, t = labels(n, k, skew)
    case = {"preds": p, "targets": t, "numClasses": k, "accuracy": accuracy_score(t, p)}
    case["macro"] = prf(p, t, "macro", k)
    case["micro"] = prf(p, t, "micro", k)
    if k == 2:
        case["binary"] = prf(p, t, "binary", k)
    cls.append(case)

lines = [l.strip() for l in open("test/fixtures/text/corpus.txt", encoding="utf-8") if len(l.split()) >= 4][:120]


def perturb(s):
    w = s.split()
    for _ in range(rng.randrange(4)):
        i = rng.randrange(len(w))
        op = rng.randrange(3)
        if op == 0 and len(w) > 1:
            del w[i]
        elif op == 1:
            w.insert(i, rng.choice(["the", "a", "of", "42", "3.5", "well-known", "(sic)"]))
        else:
            w[i] = w[i][::-1]
    return " ".join(w)


hyps = [perturb(s) for s in lines]
refs2 = [perturb(s) for s in lines]
bleu1 = sacrebleu.corpus_bleu(hyps, [lines])
bleu2 = sacrebleu.corpus_bleu(hyps, [lines, refs2])
short = sacrebleu.corpus_bleu(["the cat", "on mat"], [["the cat sat on the mat", "there is a cat on the mat"]])


def err(pred, ref, split):
    e = sum(Levenshtein.distance(split(p), split(r)) for p, r in zip(pred, ref))
    return e / sum(len(split(r)) for r in ref)


out = {
    "classification": cls,
    "bleu": {
        "hyps": hyps, "refs": lines, "refs2": refs2,
        "single": {"score": bleu1.score, "precisions": bleu1.precisions, "bp": bleu1.bp, "sysLen": bleu1.sys_len, "refLen": bleu1.ref_len},
        "multi": {"score": bleu2.score, "precisions": bleu2.precisions, "bp": bleu2.bp, "sysLen": bleu2.sys_len, "refLen": bleu2.ref_len},
        "short": {"score": short.score, "bp": short.bp},
        "tokenized": [sacrebleu.tokenizers.tokenizer_13a.Tokenizer13a()(s) for s in hyps[:40] + ["Hello, world. It's 3.5-4 km &amp; $5,000.00 (really?)", "a-\nb <skipped> c"]],
        "tokenizedInputs": hyps[:40] + ["Hello, world. It's 3.5-4 km &amp; $5,000.00 (really?)", "a-\nb <skipped> c"],
    },
    "wer": err(hyps, lines, lambda s: s.split()),
    "cer": err(hyps, lines, lambda s: list(s)),
}
with open(OUT, "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=False)
