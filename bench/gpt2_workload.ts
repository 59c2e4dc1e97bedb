// The workloads of bench/gpt2.ts, shared by its one-process run and its DDP worker: the configs
// and batches bench/torch/gpt2.py gives transformers.
import * as rt from "../src/index.js";
import { median } from "./table.js";

export const GPT2 = { vocab_size: 50257, n_positions: 256, n_embd: 384, n_layer: 6, n_head: 6, resid_pdrop: 0, embd_pdrop: 0, attn_pdrop: 0 };
export const BERT = { vocab_size: 30522, hidden_size: 256, num_hidden_layers: 4, num_attention_heads: 4, intermediate_size: 1024, max_position_embeddings: 512, num_labels: 2, hidden_dropout_prob: 0, attention_probs_dropout_prob: 0 };
export const [B_GPT, T_GPT, B_BERT, T_BERT] = [4, 256, 16, 128];
export const RUNS = Number(process.env.RUNS ?? 5);
export const STEPS = Number(process.env.STEPS ?? 3);
export const WARMUP = Number(process.env.WARMUP ?? 2);

export type Which = "gpt2" | "bert";

/** The model, its loss on a fixed random batch, and the tokens in that batch. */
export function build(which: Which): { model: rt.nn.Module; loss: (m: rt.nn.Module) => rt.Tensor; tokens: number } {
  rt.manualSeed(0);
  if (which === "gpt2") {
    const model = new rt.models.GPT2LMHeadModel(GPT2);
    const ids = rt.randint(0, GPT2.vocab_size, [B_GPT, T_GPT], { dtype: "int32" });
    return { model, loss: (m) => m.call(ids, { labels: ids }).loss, tokens: B_GPT * T_GPT };
  }
  const model = new rt.models.BertForSequenceClassification(BERT);
  const ids = rt.randint(0, BERT.vocab_size, [B_BERT, T_BERT], { dtype: "int32" });
  const labels = rt.randint(0, 2, [B_BERT], { dtype: "int32" });
  return { model, loss: (m) => m.call(ids, { labels }).loss, tokens: B_BERT * T_BERT };
}

/** tokens/s of RUNS timings of STEPS steps after WARMUP steps. */
export function timed(step: () => void, tokens: number, steps = STEPS): number[] {
  for (let i = 0; i < WARMUP; i++) step();
  const rates: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) step();
    rates.push((steps * tokens) / ((performance.now() - t0) / 1000));
  }
  return rates;
}

export interface Measurement {
  what: string;
  runs: number[];
  median: number;
  max: number;
  maxrss_mb: number;
}

export function measurement(what: string, runs: number[], scale = 1): Measurement {
  const r = runs.map((x) => x * scale);
  return { what, runs: r.map(Math.round), median: median(r), max: Math.max(...r), maxrss_mb: process.resourceUsage().maxRSS / 1024 };
}

/** One training step: zero, forward, backward, fused AdamW. */
export function trainer(model: rt.nn.Module, forward: rt.nn.Module, loss: (m: rt.nn.Module) => rt.Tensor): () => void {
  const opt = new rt.optim.AdamW(model.parameters(), { lr: 1e-4 });
  return () => {
    opt.zeroGrad();
    loss(forward).backward();
    opt.step();
  };
}
