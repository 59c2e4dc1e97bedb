// node --import tsx --conditions=source bench/tokenize.ts          (from the repository root)
//
// Encode throughput of ringtorch's tokenizers beside Hugging Face's Python `tokenizers` on one
// core (RAYON_NUM_THREADS=1), both encoding the fixture corpus (6000 lines of fortunes, 315 kB)
// as one batch, after a warm-up round (both cache words). Tokenizers: bert-base-uncased
// (WordPiece with BERT's normalizer) and GPT-2 (byte-level BPE), from test/fixtures/text.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { Tokenizer } from "../src/text/index.js";
import { median, printTable } from "./table.js";
import { gunzipSync } from "node:zlib";

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const FIX = "test/fixtures/text";
const PY = process.env.PEER_PYTHON ?? `${homedir()}/.venvs/peer/bin/python`;
const lines = readFileSync(`${FIX}/corpus.txt`, "utf8").split("\n");
const bytes = Buffer.byteLength(lines.join(""), "utf8");

function load(name: string): Tokenizer {
  const path = `${FIX}/${name}.tokenizer.json`;
  return Tokenizer.fromString(existsSync(path) ? readFileSync(path, "utf8") : gunzipSync(readFileSync(`${path}.gz`)).toString("utf8"));
}

const rows: (string | number)[][] = [];
for (const [label, name] of [["WordPiece (bert-base-uncased)", "bert-base-uncased"], ["byte-level BPE (GPT-2)", "gpt2"], ["WordLevel (note 000)", "wordlevel"]]) {
  const tok = load(name);
  const tokens = tok.encodeBatch(lines).reduce((n, e) => n + e.ids.length, 0);
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    tok.encodeBatch(lines);
    times.push((performance.now() - t0) / 1000);
  }
  const mine = median(times);
  let peer = NaN;
  let peerTokens = NaN;
  if (existsSync(PY)) {
    const out = execFileSync(PY, ["bench/text/tokenize_peer.py", name, String(ROUNDS)], { env: { ...process.env, RAYON_NUM_THREADS: "1" }, encoding: "utf8" });
    const o = JSON.parse(out.trim().split("\n").pop()!);
    peer = o.seconds;
    peerTokens = o.tokens;
  }
  if (!Number.isNaN(peerTokens) && peerTokens !== tokens) throw new Error(`${label}: ringtorch made ${tokens} tokens, Hugging Face ${peerTokens}`);
  rows.push([label, tokens, bytes / mine / 1e6, tokens / mine / 1e6, bytes / peer / 1e6, tokens / peer / 1e6, peer / mine]);
}
console.log(`encode of ${lines.length} lines (${(bytes / 1e3).toFixed(0)} kB), one core, median of ${ROUNDS} rounds; peer: Hugging Face tokenizers via ${PY}`);
printTable(["tokenizer", "tokens", "ringtorch MB/s", "Mtok/s", "HF MB/s", "HF Mtok/s", "ratio (HF time / ours)"], rows);
