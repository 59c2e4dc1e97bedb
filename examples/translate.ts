// npx ringrun --standalone --nproc-per-node 2 examples/translate.ts --data gettext --lang es --minutes 20
//
// Note 000: an encoder-decoder Transformer (examples/lib/translator.ts) that learns to translate,
// trained on the English → target pairs of the system's gettext catalogs (/usr/share/locale) or a
// tab-separated file (--data pairs.tsv). WordLevel tokenizers are trained on the data, one per
// language, with [UNK] [PAD] [SOS] [EOS]. CrossEntropyLoss ignores padding and smooths labels by
// 0.1; Adam with eps 1e-9. DDP with a DistributedSampler; rank 0 validates by greedy decoding,
// printing source / target / predicted and the BLEU and character error rate, and writes a
// checkpoint every --ckpt-freq steps; --resume latest continues. Without ringrun: one process.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as rt from "ringtorch";
import { parseFlags, say } from "./lib/cli.js";
import { Translator } from "./lib/translator.js";

const { data, dist, nn, optim, text, metrics, checkpoint } = rt;

const flags = parseFlags("translate", process.argv.slice(2), {
  data: "gettext",
  lang: "es",
  experimentName: "translate",
  runsDir: "runs",
  maxLen: 24,
  dModel: 256,
  heads: 4,
  layers: 3,
  ff: 512,
  dropout: 0.1,
  batchSize: 32,
  lr: 1e-4,
  epochs: 100,
  minutes: 0,
  ckptFreq: 500,
  logFreq: 50,
  resume: "",
  valSize: 200,
  maxPairs: 0,
  samples: 3,
  seed: 0,
});

const SPECIALS = ["[UNK]", "[PAD]", "[SOS]", "[EOS]"];

function readPairs(): { src: string; tgt: string }[] {
  const pairs =
    flags.data === "gettext"
      ? data.prepare.gettextPairs({ lang: flags.lang }).map((p) => ({ src: p.en, tgt: p.translation }))
      : readFileSync(flags.data, "utf8").split("\n").filter((l) => l.includes("\t")).map((l) => {
          const [src, tgt] = l.split("\t");
          return { src, tgt };
        });
  // One-line messages only: multi-line help texts are paragraphs, not sentences.
  const clean = pairs.filter((p) => !p.src.includes("\n") && !p.tgt.includes("\n"));
  return flags.maxPairs > 0 ? clean.slice(0, flags.maxPairs) : clean;
}

function wordLevel(texts: string[]): rt.text.Tokenizer {
  const tok = new text.Tokenizer(new text.WordLevel(new Map(), "[UNK]"));
  tok.normalizer = text.normalizers.Lowercase();
  tok.preTokenizer = text.preTokenizers.Whitespace();
  tok.train(texts, new text.WordLevelTrainer({ minFrequency: 2, specialTokens: SPECIALS }));
  return tok;
}

interface Pair {
  src: number[];
  tgt: number[];
  srcText: string;
  tgtText: string;
}

async function main(): Promise<void> {
  await dist.initProcessGroup();
  const rank = dist.getRank();
  rt.manualSeed(flags.seed);
  const raw = new data.ListDataset(readPairs());
  const { train: trainRaw, test: valRaw } = raw.trainTestSplit({ testSize: flags.valSize, seed: flags.seed });
  const srcTok = wordLevel([...trainRaw].map((p) => p.src));
  const tgtTok = wordLevel([...trainRaw].map((p) => p.tgt));
  const [pad, sos, eos] = ["[PAD]", "[SOS]", "[EOS]"].map((t) => tgtTok.tokenToId(t)!);
  const srcPadId = srcTok.tokenToId("[PAD]")!;
  const encodePair = (p: { src: string; tgt: string }): Pair => ({
    src: [...srcTok.encode(p.src).ids, srcTok.tokenToId("[EOS]")!],
    tgt: [sos, ...tgtTok.encode(p.tgt).ids, eos],
    srcText: p.src,
    tgtText: p.tgt,
  });
  const fits = (p: Pair) => p.src.length <= flags.maxLen && p.tgt.length <= flags.maxLen;
  const train = trainRaw.map(encodePair).filter(fits);
  const val = [...valRaw].map(encodePair).filter(fits);
  const padTo = (rows: number[][], v: number) => {
    const len = Math.max(...rows.map((r) => r.length));
    return rt.tensor(rows.map((r) => [...r, ...new Array<number>(len - r.length).fill(v)]), { dtype: "int32" });
  };
  const collate = (b: Pair[]) => {
    const src = padTo(b.map((p) => p.src), srcPadId);
    const tgt = padTo(b.map((p) => p.tgt), pad);
    const t = tgt.shape[1];
    return { src, srcPad: src.eq(srcPadId), tgtIn: tgt.narrow(1, 0, t - 1), tgtPad: tgt.narrow(1, 0, t - 1).eq(pad), label: tgt.narrow(1, 1, t - 1) };
  };
  const model = new Translator({ srcVocab: srcTok.getVocabSize(), tgtVocab: tgtTok.getVocabSize(), maxLen: flags.maxLen, dModel: flags.dModel, heads: flags.heads, layers: flags.layers, ff: flags.ff, dropout: flags.dropout });
  const sampler = new data.DistributedSampler(train, { seed: flags.seed });
  const loader = new data.DataLoader(train, { batchSize: flags.batchSize, sampler, collateFn: collate });
  const ddp = new rt.DDP(model);
  const optimizer = new optim.Adam(model.parameters(), { lr: flags.lr, eps: 1e-9 });
  const lossFn = new nn.CrossEntropyLoss({ ignoreIndex: pad, labelSmoothing: 0.1 });
  const ckptDir = join(flags.runsDir, flags.experimentName, "checkpoints");
  const start = await checkpoint.resume(ckptDir, { model, optimizer, sampler, batchSize: flags.batchSize, ...(flags.resume ? { step: flags.resume as "latest" } : {}) });
  if (start.path) say(rank, `resumed from ${start.path} at step ${start.step}`);
  say(rank, `translate: ${train.length} training / ${val.length} validation pairs (en → ${flags.data === "gettext" ? flags.lang : flags.data}), vocab ${srcTok.getVocabSize()} / ${tgtTok.getVocabSize()}, ${dist.getWorldSize()} rank(s)`);

  const validate = (step: number) => {
    model.eval();
    const hyps: string[] = [];
    for (let i = 0; i < val.length; i += 64) {
      const b = collate(val.slice(i, i + 64));
      for (const ids of model.greedy(b.src, b.srcPad, sos, eos, flags.maxLen)) hyps.push(tgtTok.decode(ids, { skipSpecialTokens: true }));
    }
    const refs = val.map((p) => tgtTok.decode(tgtTok.encode(p.tgtText).ids, { skipSpecialTokens: true }));
    for (let i = 0; i < Math.min(flags.samples, val.length); i++) console.log(`    source:    ${val[i].srcText}\n    target:    ${val[i].tgtText}\n    predicted: ${hyps[i]}`);
    const bleu = new metrics.BLEU().update(hyps, refs).compute({ sync: false }).score;
    const cer = new metrics.CharErrorRate().update(hyps, refs).compute({ sync: false });
    console.log(`step ${step} | validation BLEU ${bleu.toFixed(2)} | CER ${cer.toFixed(4)} | ${((performance.now() - t0) / 60000).toFixed(1)} min`);
    model.train();
  };

  const t0 = performance.now();
  const deadline = flags.minutes > 0 ? t0 + flags.minutes * 60000 : Infinity;
  let step = start.step;
  let loggedAt = step;
  let running = 0;
  let stop = false;
  for (let epoch = start.epoch; epoch < flags.epochs && !stop; epoch++) {
    sampler.setEpoch(epoch);
    let batch = epoch === start.epoch ? start.batch : 0;
    for (const b of loader) {
      batch++;
      optimizer.zeroGrad();
      const logits: rt.Tensor = ddp.call(b.src, b.srcPad, b.tgtIn, b.tgtPad);
      const loss = lossFn.call(logits.reshape([-1, logits.shape[2]]), b.label.reshape([-1]));
      loss.backward();
      optimizer.step();
      running += loss.item();
      step++;
      if (step % flags.logFreq === 0) {
        say(rank, `epoch ${epoch} step ${step} | loss ${rt.parallel.allReduceMean(running / (step - loggedAt), 1).toFixed(4)}`);
        running = 0;
        loggedAt = step;
      }
      // Every rank agrees on stopping, so that none waits in a collective the others skipped.
      stop = rt.parallel.allReduceSum([performance.now() > deadline ? 1 : 0])[0] > 0;
      if (step % flags.ckptFreq === 0 || stop) {
        if (rank === 0) validate(step);
        await checkpoint.save(ckptDir, { model, optimizer, epoch, batch }, { step, keepLast: 2 });
      }
      if (stop) break;
    }
  }
  if (!stop) {
    if (rank === 0) validate(step);
    await checkpoint.save(ckptDir, { model, optimizer, epoch: flags.epochs, batch: 0 }, { step, keepLast: 2 });
  }
  dist.destroyProcessGroup();
}

await main();
