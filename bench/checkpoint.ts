// node --import tsx bench/checkpoint.ts
// Time the training thread is blocked per checkpoint of a ~100 MB model: ringtorch's synchronous
// save (write + fsync + manifest), its asynchronous save (the snapshot copy only; the writing
// happens on a worker thread), beside torch.save of the same state dict measured in the same run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rt from "../src/index.js";
import { describePeer, findPeer, peerOutput, peerScript, runPeer } from "./peer.js";
import { median, printTable } from "./table.js";

const LAYERS = 5;
const WIDTH = 2236;
const RUNS = 5;
const dir = mkdtempSync(join(tmpdir(), "ringtorch-bench-ckpt-"));

rt.manualSeed(0);
const model = new rt.nn.Sequential(...Array.from({ length: LAYERS }, () => new rt.nn.Linear(WIDTH, WIDTH, { bias: false })));
const mb = model.parameters().reduce((n, p) => n + p.numel * 4, 0) / 1e6;

const syncMs: number[] = [];
const blockedMs: number[] = [];
const asyncTotalMs: number[] = [];
let step = 0;
for (let i = 0; i < RUNS; i++) {
  let t0 = performance.now();
  await rt.checkpoint.save(dir, { model }, { step: step++, keepLast: 2 });
  syncMs.push(performance.now() - t0);

  t0 = performance.now();
  const pending = rt.checkpoint.save(dir, { model }, { step: step++, async: true, keepLast: 2 });
  blockedMs.push(performance.now() - t0);
  await pending;
  asyncTotalMs.push(performance.now() - t0);
}

let peer: { mb: number; save_ms: number; save_fsync_ms: number } | null = null;
const torchPeer = findPeer();
console.log(describePeer(torchPeer, 1));
if (typeof torchPeer !== "string") {
  const out = peerOutput(runPeer(torchPeer, [peerScript("checkpoint_save.py"), dir], 1, { LAYERS: String(LAYERS), WIDTH: String(WIDTH) }), "checkpoint_save.py");
  peer = JSON.parse(out.trim().split("\n").pop()!);
}
rmSync(dir, { recursive: true, force: true });

const torchMs = peer?.save_fsync_ms ?? NaN;
console.log(`checkpoint of a ${mb.toFixed(0)} MB model (${LAYERS}×Linear(${WIDTH}, ${WIDTH})), median of ${RUNS}; lower is better`);
printTable(
  ["save", "training blocked (ms)", "until on disk (ms)", "blocked vs torch.save+fsync"],
  [
    ["ringtorch sync (fsync, manifest)", median(syncMs), median(syncMs), torchMs / median(syncMs)],
    ["ringtorch async", median(blockedMs), median(asyncTotalMs), torchMs / median(blockedMs)],
    ["torch.save", peer?.save_ms ?? NaN, peer?.save_ms ?? NaN, torchMs / (peer?.save_ms ?? NaN)],
    ["torch.save + fsync", torchMs, torchMs, 1],
  ],
);
if (!peer) console.log("torch.save not measured: see the PyTorch peer line above");
