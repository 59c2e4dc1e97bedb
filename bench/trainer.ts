// node --import tsx --conditions=source bench/trainer.ts [--runs 5] [--steps 30] [--threads 1] [--no-peer]
//
// The Trainer's overhead: the time of an optimizer step under Trainer.train() against the loop
// written by hand for the same work (DataLoader with a shuffling sampler, DataCollatorWithPadding,
// AdamW without decay on biases/LayerNorm, linear warmup, gradients clipped to norm 1,
// loss.item()), on the same BERT sequence classifier (hidden 128, 2 layers, batch 16, 64 tokens)
// and the same synthetic batches. Each run trains `steps` steps from a fresh optimizer on each side,
// the Trainer's setup included (no saving, no evaluation, no progress bar); the runs alternate.
// The target is a ratio of at most 1.02. Beside it, the same measurement of Hugging Face's Trainer
// against a PyTorch hand loop (bench/torch/trainer.py), also as a ratio.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rt from "../src/index.js";
import { findPeer, describePeer, runPeer, peerScript } from "./peer.js";
import { median, printTable } from "./table.js";

const argv = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
};
const runs = option("--runs", 5);
const steps = option("--steps", 30);
const threads = option("--threads", 1);
const BATCH = 16;
const SEQ = 64;
const HIDDEN = 128;
const LAYERS = 2;
const VOCAB = 2000;

(rt.getBackend() as { setNumThreads?: (n: number) => void }).setNumThreads?.(threads);

const g = new rt.Generator(0);
const ids = rt.randint(5, VOCAB, [steps * BATCH, SEQ], { generator: g }).toArray() as number[][];
const labels = rt.randint(0, 2, [steps * BATCH], { generator: g }).toArray() as number[];
const ds = new rt.data.ListDataset(ids.map((inputIds, i) => ({ inputIds, labels: labels[i] })));
const collate = new rt.data.DataCollatorWithPadding({ padId: 0 }).collate;

rt.manualSeed(0);
const model = new rt.models.BertForSequenceClassification({
  vocab_size: VOCAB, hidden_size: HIDDEN, num_hidden_layers: LAYERS, num_attention_heads: HIDDEN / 64,
  intermediate_size: 4 * HIDDEN, max_position_embeddings: SEQ, num_labels: 2,
});
model.train();

function hand(): number {
  // Timed from the optimizer's creation, as Trainer.train() makes its own.
  const t0 = performance.now();
  const noDecay = (n: string) => n.endsWith("bias") || n.includes("LayerNorm.");
  const named = [...model.namedParameters()];
  const optimizer = new rt.optim.AdamW(
    [
      { params: named.filter(([n]) => !noDecay(n)).map(([, p]) => p), weightDecay: 0.01 },
      { params: named.filter(([n]) => noDecay(n)).map(([, p]) => p), weightDecay: 0 },
    ],
    { lr: 1e-4, weightDecay: 0.01, eps: 1e-8 },
  );
  const scheduler = rt.optim.getLinearScheduleWithWarmup(optimizer, 2, steps);
  const sampler = new rt.data.DistributedSampler(ds, { numReplicas: 1, rank: 0, seed: 42 });
  const loader = new rt.data.DataLoader(ds, { batchSize: BATCH, sampler, collateFn: collate });
  for (const b of loader) {
    const { loss } = model.call(b.inputIds, { attentionMask: b.attentionMask, labels: b.labels });
    loss!.backward();
    rt.nn.utils.clipGradNorm(model.parameters(), 1);
    optimizer.step();
    scheduler.step();
    optimizer.zeroGrad();
    loss!.item();
  }
  return (performance.now() - t0) / steps;
}

async function trainer(outputDir: string): Promise<number> {
  const args = new rt.TrainingArguments({
    outputDir, perDeviceTrainBatchSize: BATCH, learningRate: 1e-4, weightDecay: 0.01, warmupSteps: 2, maxSteps: steps,
    saveStrategy: "no", evalStrategy: "no", disableTqdm: true,
  });
  const t = new rt.Trainer({ model, args, trainDataset: ds, dataCollator: collate as never });
  const t0 = performance.now();
  await t.train();
  return (performance.now() - t0) / steps;
}

const out = mkdtempSync(join(tmpdir(), "ringtorch-bench-trainer-"));
const hands: number[] = [];
const trainers: number[] = [];
try {
  hand();
  await trainer(out);
  for (let r = 0; r < runs; r++) {
    hands.push(hand());
    trainers.push(await trainer(out));
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
console.log(`ringtorch hand loop ms/step runs=[${hands.map((v) => v.toFixed(2)).join(", ")}]`);
console.log(`ringtorch Trainer   ms/step runs=[${trainers.map((v) => v.toFixed(2)).join(", ")}]`);

/** The peer's hand and Trainer milliseconds per step, or why there are none. */
function peerFigures(): { hand: number; trainer: number } | string {
  if (argv.includes("--no-peer")) return "skipped (--no-peer)";
  const peer = findPeer();
  console.log(describePeer(peer, threads));
  if (typeof peer === "string") return peer;
  const r = runPeer(peer, [peerScript("trainer.py"), "--runs", String(runs), "--steps", String(steps), "--batch", String(BATCH), "--seq", String(SEQ), "--hidden", String(HIDDEN), "--layers", String(LAYERS), "--vocab", String(VOCAB)], threads);
  if (r.status !== 0) return `the PyTorch peer failed: ${(r.stderr || r.error?.message || "").trim().split("\n").pop()}`;
  process.stdout.write(r.stdout.split("\n").filter((l) => !l.startsWith("{")).join("\n"));
  const m = /hand_ms=([\d.]+) trainer_ms=([\d.]+)/.exec(r.stdout);
  return m ? { hand: Number(m[1]), trainer: Number(m[2]) } : "could not read the PyTorch peer's output";
}

const peer = peerFigures();
const ours = { hand: median(hands), trainer: median(trainers) };
const p = typeof peer === "string" ? null : peer;
console.log(`\nBERT classifier (hidden ${HIDDEN}, ${LAYERS} layers, batch ${BATCH} × ${SEQ} tokens), ${steps} steps a run, ${threads} thread(s), median of ${runs} runs`);
printTable(
  ["", "hand loop ms/step", "Trainer ms/step", "Trainer / hand loop"],
  [
    ["ringtorch", ours.hand, ours.trainer, (ours.trainer / ours.hand).toFixed(3)],
    ["PyTorch + HF Trainer", p?.hand ?? NaN, p?.trainer ?? NaN, p ? (p.trainer / p.hand).toFixed(3) : "n/a"],
    ["ringtorch / PyTorch", p ? ours.hand / p.hand : NaN, p ? ours.trainer / p.trainer : NaN, ""],
  ],
);
console.log(`ringtorch Trainer overhead: ${((ours.trainer / ours.hand - 1) * 100).toFixed(1)}% (target ≤ 2%)`);
if (typeof peer === "string") console.log(`(PyTorch peer not measured: ${peer})`);
