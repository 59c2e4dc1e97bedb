// npx ringrun --standalone --nproc-per-node 2 examples/gpt_instruct.ts --data wordnet --experiment-name gpt-wordnet --steps 2000
//
// Note 003's train_llm.py: a GPT-2 trained on instruction data in the Alpaca format, the loss on
// the response tokens only. The model is built from a config (the flags below) or loaded from
// Hugging Face weights on disk (--model DIR with config.json, model.safetensors, tokenizer.json).
// AdamW with linear warmup and cosine decay; --grad-accum micro-batches per step, all but the last
// under DDP's noSync (no all-reduce until the step's gradients are complete); a DistributedSampler
// shares the data among ranks; rank 0 validates and writes a checkpoint every --ckpt-freq steps;
// --resume latest continues from the newest one. At the end rank 0 prints sample generations.
//
// --data: an Alpaca .json / .jsonl file, or "wordnet" for word → definition records from the
// system's WordNet (Debian's wordnet-base). Without --model a byte-level BPE tokenizer is trained on
// the training records. Without ringrun it trains as one process.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import * as rt from "ringtorch";
import { parseFlags, say } from "./lib/cli.js";

const { data, dist, models, optim, text, checkpoint } = rt;

const flags = parseFlags("gpt_instruct", process.argv.slice(2), {
  data: "wordnet",
  model: "",
  experimentName: "gpt-instruct",
  runsDir: "runs",
  batchSize: 8,
  seqLength: 128,
  lr: 6e-4,
  steps: 1000,
  gradAccum: 1,
  warmup: 50,
  ckptFreq: 200,
  logFreq: 20,
  resume: "",
  nLayer: 4,
  nEmbd: 256,
  nHead: 4,
  vocabSize: 4000,
  maxRecords: 20000,
  valRecords: 200,
  samples: 3,
  seed: 0,
});

interface Example {
  ids: number[];
  labels: number[];
  prompt: string;
  output: string;
}

async function loadRecords(): Promise<rt.data.AlpacaRecord[]> {
  const source = flags.data === "wordnet" ? data.prepare.wordnetDefinitions() : data.readAlpaca(flags.data);
  const out: rt.data.AlpacaRecord[] = [];
  for await (const r of source) {
    out.push(r);
    if (out.length >= flags.maxRecords) break;
  }
  if (out.length <= flags.valRecords) throw new Error(`gpt_instruct: ${flags.data} gave ${out.length} records; need more than --val-records ${flags.valRecords}`);
  return out;
}

function byteLevelTokenizer(texts: string[]): rt.text.Tokenizer {
  const tok = new text.Tokenizer(new text.BPE(new Map(), []));
  tok.preTokenizer = new text.preTokenizers.ByteLevelPreTokenizer(false);
  tok.decoder = new text.decoders.ByteLevelDecoder();
  tok.train(texts, new text.BpeTrainer({ vocabSize: flags.vocabSize, specialTokens: ["<|endoftext|>"], initialAlphabet: text.byteLevelAlphabet() }));
  return tok;
}

/** Prompt tokens labelled -100 (no loss), then the response and the end token, cut to seqLength. */
function encode(tok: rt.text.Tokenizer, r: rt.data.AlpacaRecord, eos: number): Example {
  const prompt = data.alpacaPrompt(r);
  const p = tok.encode(prompt, null, { addSpecialTokens: false }).ids;
  const o = [...tok.encode(r.output, null, { addSpecialTokens: false }).ids, eos];
  const ids = [...p, ...o].slice(0, flags.seqLength);
  const labels = [...p.map(() => -100), ...o].slice(0, flags.seqLength);
  return { ids, labels, prompt, output: r.output };
}

/** Right-padded batches: a causal model never looks right, so the padding needs no mask. */
function collate(eos: number) {
  return (batch: Example[]) => {
    const len = Math.max(...batch.map((e) => e.ids.length));
    const pad = (xs: number[], v: number) => [...xs, ...new Array<number>(len - xs.length).fill(v)];
    return {
      inputIds: rt.tensor(batch.map((e) => pad(e.ids, eos)), { dtype: "int32" }),
      labels: rt.tensor(batch.map((e) => pad(e.labels, -100)), { dtype: "int32" }),
    };
  };
}

function validate(model: rt.models.GPT2LMHeadModel, val: Example[], eos: number): number {
  model.eval();
  let sum = 0;
  let batches = 0;
  rt.noGrad(() => {
    for (let i = 0; i < val.length; i += flags.batchSize) {
      const b = collate(eos)(val.slice(i, i + flags.batchSize));
      sum += model.call(b.inputIds, { labels: b.labels }).loss!.item();
      batches++;
    }
  });
  model.train();
  return sum / batches;
}

async function main(): Promise<void> {
  await dist.initProcessGroup();
  const rank = dist.getRank();
  const world = dist.getWorldSize();
  rt.manualSeed(flags.seed);
  const records = await loadRecords();
  const { train: trainRecords, test: valRecords } = new data.ListDataset(records).trainTestSplit({ testSize: flags.valRecords, seed: flags.seed });
  const tok = flags.model ? text.Tokenizer.fromFile(join(flags.model, "tokenizer.json")) : byteLevelTokenizer([...trainRecords].map((r) => `${data.alpacaPrompt(r)}${r.output}`));
  const eos = tok.tokenToId("<|endoftext|>");
  if (eos === undefined) throw new Error("gpt_instruct: the tokenizer has no <|endoftext|> token");
  const model = flags.model
    ? models.GPT2LMHeadModel.fromPretrained(flags.model).train()
    : new models.GPT2LMHeadModel({ vocab_size: tok.getVocabSize(), n_positions: flags.seqLength, n_embd: flags.nEmbd, n_layer: flags.nLayer, n_head: flags.nHead, eos_token_id: eos, bos_token_id: eos });
  // A record whose prompt fills the whole window has nothing left to learn from: drop it.
  const learnable = (e: Example) => e.labels.some((l) => l !== -100);
  const train = trainRecords.map((r) => encode(tok, r, eos)).filter(learnable);
  const val = [...valRecords].map((r) => encode(tok, r, eos)).filter(learnable);
  if (train.length === 0 || val.length === 0) throw new Error(`gpt_instruct: no record's response fits in --seq-length ${flags.seqLength} after its prompt; raise it`);
  const sampler = new data.DistributedSampler(train, { seed: flags.seed });
  const loader = new data.DataLoader(train, { batchSize: flags.batchSize, sampler, collateFn: collate(eos) });
  const ddp = new rt.DDP(model);
  const optimizer = new optim.AdamW(model.parameters(), { lr: flags.lr, weightDecay: 0.1, betas: [0.9, 0.95] });
  const scheduler = optim.getCosineScheduleWithWarmup(optimizer, flags.warmup, flags.steps);
  const ckptDir = join(flags.runsDir, flags.experimentName, "checkpoints");
  mkdirSync(ckptDir, { recursive: true });
  const start = await checkpoint.resume(ckptDir, { model, optimizer, scheduler, sampler, batchSize: flags.batchSize, ...(flags.resume ? { step: flags.resume as "latest" } : {}) });
  if (start.path) say(rank, `resumed from ${start.path} at step ${start.step}`);
  say(rank, `gpt_instruct: ${train.length} training / ${val.length} validation records, vocab ${tok.getVocabSize()}, ${world} rank(s), ${model.parameters().reduce((a: number, p: rt.Tensor) => a + p.numel, 0)} parameters`);

  let step = start.step;
  let loggedAt = step;
  let epoch = start.epoch;
  let batchInEpoch = start.batch;
  let micro = 0;
  let running = 0;
  const t0 = performance.now();
  while (step < flags.steps) {
    for (const b of loader) {
      batchInEpoch++;
      const last = ++micro % flags.gradAccum === 0;
      const backward = () => {
        const loss = ddp.call(b.inputIds, { labels: b.labels }).loss!;
        loss.div(flags.gradAccum).backward();
        running += loss.item() / flags.gradAccum;
      };
      if (last) backward();
      else ddp.noSync(backward);
      if (!last) continue;
      rt.nn.utils.clipGradNorm(model.parameters(), 1.0);
      optimizer.step();
      scheduler.step();
      optimizer.zeroGrad();
      step++;
      if (step % flags.logFreq === 0) {
        const loss = rt.parallel.allReduceMean(running / (step - loggedAt), 1);
        say(rank, `step ${step} | loss ${loss.toFixed(4)} | lr ${scheduler.getLastLr()[0].toExponential(2)} | ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      }
      if (step % flags.logFreq === 0) {
        running = 0;
        loggedAt = step;
      }
      if (step % flags.ckptFreq === 0 || step === flags.steps) {
        if (rank === 0) say(rank, `step ${step} | validation loss ${validate(model, val, eos).toFixed(4)}`);
        await checkpoint.save(ckptDir, { model, optimizer, scheduler, epoch, batch: batchInEpoch }, { step, keepLast: 2 });
      }
      if (step >= flags.steps) break;
    }
    if (step < flags.steps) {
      epoch++;
      batchInEpoch = 0;
      sampler.setEpoch(epoch);
    }
  }
  if (rank === 0) {
    model.eval();
    for (const e of val.slice(0, flags.samples)) {
      const window = model.settings.nPositions;
      const room = Math.min(48, Math.floor(window / 2));
      const prompt = rt.tensor([tok.encode(e.prompt, null, { addSpecialTokens: false }).ids.slice(-(window - room))], { dtype: "int32" });
      const out = models.generate(model, prompt, { maxNewTokens: room, eosTokenId: eos });
      const reply = tok.decode((out.toArray() as number[][])[0].slice(prompt.shape[1]), { skipSpecialTokens: true });
      console.log(`--- sample\n${e.prompt.split("### Instruction:\n")[1]?.split("\n")[0] ?? ""}\n  generated: ${reply.trim()}\n  reference: ${e.output}`);
    }
  }
  dist.destroyProcessGroup();
}

await main();
