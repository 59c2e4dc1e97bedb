// npx ringrun --standalone --nproc-per-node 2 examples/pipeline_gpt.ts [steps=60] [--schedule gpipe|1f1b|interleaved] [--microbatches 4]
//
// Pipeline parallelism: a small GPT (character level, causal self-attention) written as an
// nn.Sequential of embedding, 4 blocks and a head, split into one stage per rank with
// dist.pipelining.pipeline() (two per rank with --schedule interleaved: stage s on rank s mod p).
// Each step cuts the batch into micro-batches; the schedule (1F1B by
// default) runs their forwards and backwards so that the stages work at the same time, sending
// activations and gradients with isend/irecv. The loss is computed on the last stage; with
// lossScaling "mean" each micro-batch's mean loss is weighted by its share of the batch, so the
// gradients are those of the whole batch's mean loss. Every rank steps the optimizer of its stage.
// Without ringrun (no RANK) the same model trains unsplit in one process.
import * as rt from "ringtorch";

const { nn, optim, dist } = rt;
const { pipelining } = dist;
type Tensor = rt.Tensor;

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const steps = Number(process.argv.slice(2).find((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--")) ?? 60);
const schedule = flag("schedule", "1f1b");
const nMicrobatches = Number(flag("microbatches", "4"));
const [vocabText, blockSize, dModel, nLayers, batchSize] = ["the quick brown fox jumps over the lazy dog. ", 32, 64, 4, 16] as const;
const vocab = [...new Set(vocabText)];

class Embed extends nn.Module {
  tok = new nn.Embedding(vocab.length, dModel);
  pos = new nn.Embedding(blockSize, dModel);
  override forward(idx: Tensor): Tensor {
    return this.tok.call(idx).add(this.pos.call(rt.arange(idx.shape[1]!)));
  }
}
class Block extends nn.Module {
  layer = new nn.TransformerEncoderLayer(dModel, 4, { dimFeedforward: 4 * dModel, dropout: 0, activation: "gelu", batchFirst: true, normFirst: true });
  override forward(x: Tensor): Tensor {
    return this.layer.call(x, { isCausal: true });
  }
}
class Head extends nn.Module {
  norm = new nn.LayerNorm(dModel);
  lm_head = new nn.Linear(dModel, vocab.length);
  override forward(x: Tensor): Tensor {
    return this.lm_head.call(this.norm.call(x));
  }
}

rt.manualSeed(0);
const model = new nn.Sequential(new Embed(), ...Array.from({ length: nLayers }, () => new Block()), new Head());
const lossFn = (logits: Tensor, target: Tensor) => nn.functional.crossEntropy(logits.reshape(-1, vocab.length), target.reshape(-1));

// Batches of random windows of the repeated text: inputs and the next characters.
const text = vocabText.repeat(40).split("").map((c) => vocab.indexOf(c));
function batch(): { x: Tensor; y: Tensor } {
  const starts = rt.randint(0, text.length - blockSize - 1, [batchSize]).toArray() as number[];
  return {
    x: rt.tensor(starts.map((s) => text.slice(s, s + blockSize)), { dtype: "int32" }),
    y: rt.tensor(starts.map((s) => text.slice(s + 1, s + blockSize + 1)), { dtype: "int32" }),
  };
}

if (process.env.RANK === undefined) {
  const opt = new optim.AdamW(model.parameters(), { lr: 3e-3 });
  for (let step = 1; step <= steps; step++) {
    const { x, y } = batch();
    opt.zeroGrad();
    const loss = lossFn(model.call(x) as Tensor, y);
    loss.backward();
    opt.step();
    if (step % 10 === 0 || step === 1) console.log(`step ${step}: loss ${loss.item().toFixed(4)} (one process)`);
  }
} else {
  await dist.initProcessGroup();
  const rank = dist.getRank();
  const p = dist.getWorldSize();
  // Stage boundaries spread the children evenly: 0 (embed), 1..nLayers (blocks), nLayers+1 (head).
  const perRank = schedule === "interleaved" ? 2 : 1;
  const numStages = p * perRank;
  const splitPoints = Array.from({ length: numStages - 1 }, (_, i) => String(Math.round(((i + 1) * (nLayers + 2)) / numStages)));
  const pipe = pipelining.pipeline(model, { splitPoints });
  const mine = Array.from({ length: perRank }, (_, i) => i * p + rank);
  const stages = mine.map((s) => pipe.buildStage(s));
  const options = { nMicrobatches, lossFn, lossScaling: "mean" as const };
  const sched =
    schedule === "interleaved"
      ? new pipelining.ScheduleInterleaved1F1B(stages, options)
      : new (schedule === "gpipe" ? pipelining.ScheduleGPipe : pipelining.Schedule1F1B)(stages[0]!, options);
  const opt = new optim.AdamW(mine.flatMap((s) => [...pipe.getStageModule(s).parameters()]), { lr: 3e-3 });
  const holdsFirst = mine.includes(0);
  const holdsLast = mine.includes(numStages - 1);
  // Every rank draws the same batches (same seed): the first stage uses the inputs, the last the targets.
  rt.manualSeed(1);
  for (let step = 1; step <= steps; step++) {
    const { x, y } = batch();
    opt.zeroGrad();
    const losses: Tensor[] = [];
    if (holdsFirst) sched.step(x);
    else if (holdsLast) sched.step({ target: y, losses });
    else sched.step();
    opt.step();
    const t = sched.lastTimeline!;
    if (holdsLast && (step % 10 === 0 || step === 1)) {
      const sizes = Array.from({ length: nMicrobatches }, (_, i) => Math.floor(batchSize / nMicrobatches) + (i < batchSize % nMicrobatches ? 1 : 0));
      const loss = losses.reduce((s, l, i) => s + (l.item() * sizes[i]!) / batchSize, 0);
      console.log(`step ${step}: loss ${loss.toFixed(4)}  ${t.totalMs.toFixed(0)} ms, bubble ${(100 * t.bubbleFraction).toFixed(0)}% on this rank (ideal ${(100 * sched.idealBubbleFraction()).toFixed(0)}%)`);
    }
  }
  await dist.destroyProcessGroup();
}
