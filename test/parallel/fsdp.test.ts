import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { explain, launch } from "../distributed/harness.js";

const PARITY = fileURLToPath(new URL("./workers/fsdp_parity.ts", import.meta.url));
const RESHARD = fileURLToPath(new URL("./workers/fsdp_reshard.ts", import.meta.url));
const CHECKS = fileURLToPath(new URL("./workers/fsdp_checks.ts", import.meta.url));

interface Outcome {
  failures: string[];
  checks: string[];
}

for (const world of [2, 3]) {
  test(`FSDP on ${world} ranks takes DDP's steps: every rank's shards match DDP's rows after every step`, async () => {
    const results = await launch({ world, script: PARITY, timeoutMs: 240_000, env: { RINGTORCH_NUM_THREADS: "1" } });
    for (const r of results) assert.equal(r.code, 0, explain(results));
    const outcomes = results.map((r) => r.result as Outcome);
    assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
    assert.equal(outcomes[0].checks.length, 7, `scenarios run: ${outcomes[0].checks.join(", ")}`);
  });
}

test("HYBRID_SHARD on 4 ranks (2 × 2 mesh) takes DDP's steps, with one replica all-reduce per unit", async () => {
  const results = await launch({ world: 4, script: PARITY, timeoutMs: 240_000, env: { RINGTORCH_NUM_THREADS: "1", FSDP_ONLY_HYBRID: "1" } });
  for (const r of results) assert.equal(r.code, 0, explain(results));
  const outcomes = results.map((r) => r.result as Outcome);
  assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
  assert.deepEqual(outcomes[0].checks, ["HYBRID_SHARD 2 × 2, SGD momentum", "HYBRID_SHARD 2 × 2, AdamW, clipGradNorm"]);
});

test("FULL_SHARD (ZeRO-3), SHARD_GRAD_OP (ZeRO-2) and ZeRO-1 memory after the step follow the ZeRO formulas, with at most 2 units gathered at once; ZeRO-1 takes the plain optimizer's steps; a skipped unit is named", async () => {
  const results = await launch({ world: 2, script: CHECKS, timeoutMs: 240_000, env: { RINGTORCH_NUM_THREADS: "1" } });
  for (const r of results) assert.equal(r.code, 0, explain(results));
  const outcomes = results.map((r) => r.result as Outcome);
  assert.deepEqual(outcomes.flatMap((o) => o.failures), []);
  assert.equal(outcomes[0].checks.length, 6, `checks run: ${outcomes[0].checks.join(", ")}`);
});

/** A safetensors reader written from the format's spec (8-byte little-endian header size, JSON header, raw little-endian data). */
function readSafetensorsSpec(path: string): Map<string, { shape: number[]; values: Float32Array }> {
  const bytes = readFileSync(path);
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString("utf8")) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const out = new Map<string, { shape: number[]; values: Float32Array }>();
  for (const [name, info] of Object.entries(header)) {
    if (name === "__metadata__") continue;
    assert.equal(info.dtype, "F32", `${name} is ${info.dtype}`);
    const [begin, end] = info.data_offsets;
    const data = bytes.subarray(8 + headerLength + begin, 8 + headerLength + end);
    out.set(name, { shape: info.shape, values: new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length)) });
  }
  return out;
}

test("a sharded checkpoint saved on 4 ranks loads on 2 and on 3: bit-identical after gathering, and training goes on as on 4", async () => {
  const dir = mkdtempSync(join(tmpdir(), "fsdp-reshard-"));
  try {
    const env = { RINGTORCH_NUM_THREADS: "1", DIR: dir };
    for (const [world, phase] of [[4, "save"], [2, "load"], [3, "load"]] as const) {
      const results = await launch({ world, script: RESHARD, timeoutMs: 240_000, env: { ...env, PHASE: phase } });
      for (const r of results) assert.equal(r.code, 0, explain(results));
    }
    const saved = readSafetensorsSpec(join(dir, "at_save.safetensors"));
    assert.deepEqual(saved.get("b.weight")!.shape, [7, 15]);
    const after = readSafetensorsSpec(join(dir, "after_save.safetensors"));
    for (const world of [2, 3]) {
      const loaded = readSafetensorsSpec(join(dir, `loaded_${world}.safetensors`));
      assert.deepEqual([...loaded.keys()].sort(), ["a.bias", "a.weight", "b.bias", "b.weight", "c.bias", "c.weight"]);
      for (const [name, t] of saved) assert.deepEqual(loaded.get(name), t, `${name} after resharding 4 → ${world} ranks`);
      const afterLoad = readSafetensorsSpec(join(dir, `after_load_${world}.safetensors`));
      for (const [name, t] of after) {
        const got = afterLoad.get(name)!.values;
        t.values.forEach((v, i) => assert.ok(Math.abs(v - got[i]) <= 1e-5, `${name}[${i}]: ${got[i]} on ${world} ranks after resuming, ${v} on 4`));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
