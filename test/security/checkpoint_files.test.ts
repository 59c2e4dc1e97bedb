import assert from "node:assert/strict";
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import * as rt from "../../src/index.js";
import { smallModel, stepDir, tempDir } from "./checkpoint_helpers.js";

const { checkpoint } = rt;

function modes(root: string): { path: string; dir: boolean; mode: string }[] {
  const out: { path: string; dir: boolean; mode: string }[] = [];
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    const stat = lstatSync(path);
    out.push({ path, dir: stat.isDirectory(), mode: (stat.mode & 0o777).toString(8) });
    if (stat.isDirectory()) out.push(...modes(path));
  }
  return out;
}

test("every checkpoint file is 0600 and every folder 0700, whatever the umask", async (t) => {
  const root = join(tempDir(t), "made/by/save");
  const previous = process.umask(0);
  try {
    const model = smallModel();
    const optimizer = new rt.optim.Adam(model.parameters(), { lr: 0.1 });
    await checkpoint.save(root, { model, optimizer }, { step: 1 });
    await checkpoint.save(root, { model }, { step: 2, async: true });
    await checkpoint.flush();
    await checkpoint.save(root, { model }, { step: 3, sharded: { shard: { w: rt.ones([4]) } } });
  } finally {
    process.umask(previous);
  }
  const written = modes(root);
  assert.ok(written.filter((f) => !f.dir).length >= 9, "three checkpoints' files were written");
  for (const f of written) assert.equal(f.mode, f.dir ? "700" : "600", f.path);
  for (const dir of [root, join(root, ".."), join(root, "../..")]) assert.equal((statSync(dir).mode & 0o777).toString(8), "700", `${dir}, created by save`);
});

test("save refuses a step folder that is a planted symbolic link, and writes nothing through it", async (t) => {
  const base = tempDir(t);
  const root = join(base, "ckpt");
  const elsewhere = join(base, "elsewhere");
  mkdirSync(root);
  mkdirSync(elsewhere);
  symlinkSync(elsewhere, stepDir(root, 5));
  await assert.rejects(checkpoint.save(root, { model: smallModel() }, { step: 5 }), /step_00000005 is a symbolic link, not a folder; refusing to write the checkpoint through it/);
  assert.deepEqual(readdirSync(elsewhere), []);
});

test("save refuses a file in place of the step folder", async (t) => {
  const root = tempDir(t);
  writeFileSync(stepDir(root, 6), "not a folder");
  await assert.rejects(checkpoint.save(root, { model: smallModel() }, { step: 6 }), /step_00000006 is a file, not a folder; refusing/);
});

test("a newest checkpoint that does not verify neither counts for keepLast nor costs the good ones", async (t) => {
  const root = tempDir(t);
  const model = smallModel();
  for (const step of [1, 2, 3]) await checkpoint.save(root, { model }, { step, keepLast: 2 });
  assert.deepEqual(checkpoint.listCheckpoints(root).map((c) => c.step), [3, 2]);
  // Step 3 becomes unreadable (here: a flipped byte; a read error or a file too large to read did the same).
  const file = join(stepDir(root, 3), "model.safetensors");
  const bytes = readFileSync(file);
  bytes[bytes.length - 1]! ^= 0xff;
  writeFileSync(file, bytes);
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (message: string) => warnings.push(message);
  try {
    await checkpoint.save(root, { model }, { step: 4, keepLast: 2 });
    assert.deepEqual(checkpoint.listCheckpoints(root).map((c) => c.step), [4, 3, 2], "step 2 is still one of the two good ones; step 3 is kept for inspection");
    assert.match(warnings.join("\n"), /keeping .*step_00000003, which does not verify .*fails its checksum/);
    await checkpoint.save(root, { model }, { step: 5, keepLast: 2 });
    assert.deepEqual(checkpoint.listCheckpoints(root).map((c) => c.step), [5, 4, 3]);
  } finally {
    console.warn = warn;
  }
  assert.equal((await checkpoint.resume(root, { model: smallModel(1) })).step, 5);
});

test("keepLast must be a positive integer", async (t) => {
  const root = tempDir(t);
  await assert.rejects(checkpoint.save(root, { model: smallModel() }, { step: 1, keepLast: 0 }), /keepLast must be a positive integer/);
  assert.equal(existsSync(stepDir(root, 1)), false);
});

test("a sparse safetensors file declaring 1.9 GiB is refused before anything is allocated", async (t) => {
  const path = join(tempDir(t), "sparse.safetensors");
  const n = Math.floor((1.9 * 2 ** 30) / 4);
  // Written from the format's definition: 8-byte little-endian header length, JSON header, data.
  const header = Buffer.from(JSON.stringify({ w: { dtype: "F32", shape: [n], data_offsets: [0, n * 4] } }).padEnd(64, " "));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(header.length));
  const fd = openSync(path, "w");
  writeSync(fd, length);
  writeSync(fd, header);
  closeSync(fd);
  truncateSync(path, 8 + header.length + n * 4);
  const stat = statSync(path);
  if (stat.blocks * 512 > 64 * 1024) return t.skip("this file system does not keep the file sparse");
  const before = process.memoryUsage().arrayBuffers;
  assert.throws(() => rt.serialization.load(path), /sparse\.safetensors is \d+ bytes long but only \d+ are stored on disk \(a sparse file\).*allowSparse/);
  assert.ok(process.memoryUsage().arrayBuffers - before < 2 ** 30, "the 1.9 GiB were never allocated");
  assert.throws(() => rt.serialization.load(path, { allowSparce: true } as never), /unknown option "allowSparce"; did you mean allowSparse/);
});

test("serialization.load refuses a FIFO at once instead of waiting for a writer", { timeout: 20_000 }, async (t) => {
  const { execFileSync } = await import("node:child_process");
  const path = join(tempDir(t), "fifo.safetensors");
  execFileSync("mkfifo", [path]);
  assert.throws(() => rt.serialization.load(path), /fifo\.safetensors is not a regular file/);
});
