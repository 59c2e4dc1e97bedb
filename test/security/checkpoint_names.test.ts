import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import * as rt from "../../src/index.js";
import { editManifest, entryFor, replaceListed, smallModel, stepDir, tempDir } from "./checkpoint_helpers.js";

const { checkpoint } = rt;
// Each case must be refused at once: a hang (FIFO) or an endless read (/dev/zero) fails by timeout.
const bounded = { timeout: 20_000 };

/** Saves steps 1 and 2 of a small model; the tests tamper with step 2, so a fallback finds step 1. */
async function twoSteps(t: { after(fn: () => void): void }): Promise<{ root: string; dir: string }> {
  const root = tempDir(t);
  const model = smallModel();
  await checkpoint.save(root, { model }, { step: 1 });
  await checkpoint.save(root, { model }, { step: 2 });
  return { root, dir: stepDir(root, 2) };
}

/** verify, load and resume all refuse step 2 for `reason`; latest() and resume() fall back to step 1. */
async function refused(root: string, dir: string, reason: RegExp): Promise<void> {
  assert.throws(() => checkpoint.verifyCheckpoint(dir), reason);
  assert.throws(() => checkpoint.load(dir), reason);
  const skipped: string[] = [];
  assert.equal(checkpoint.latest(root, { onSkip: (_p, why) => skipped.push(why) })?.manifest.step, 1);
  assert.match(skipped[0] ?? "", reason);
  const warn = console.warn;
  console.warn = () => {};
  try {
    assert.equal((await checkpoint.resume(root, { model: smallModel(9) })).step, 1);
  } finally {
    console.warn = warn;
  }
}

const PLAIN = /expected a plain file name inside the checkpoint folder/;

test("a manifest entry with ../ is refused, even with the outside file's true size and CRC", bounded, async (t) => {
  const { root, dir } = await twoSteps(t);
  const outside = new TextEncoder().encode("secret outside the checkpoint");
  writeFileSync(join(root, "outside.bin"), outside);
  editManifest(dir, (m) => m.files.push(entryFor("../outside.bin", outside)));
  await refused(root, dir, PLAIN);
});

for (const name of ["/etc/hostname", "..", ".hidden", "a/b.safetensors", ""]) {
  test(`a manifest naming ${JSON.stringify(name)} is refused`, bounded, async (t) => {
    const { root, dir } = await twoSteps(t);
    editManifest(dir, (m) => m.files.push({ name, bytes: 0, crc32: 0 }));
    await refused(root, dir, PLAIN);
  });
}

test("/dev/zero through ../ in a manifest is refused without a read", bounded, async (t) => {
  const { root, dir } = await twoSteps(t);
  editManifest(dir, (m) => m.files.push({ name: "../../../../../../dev/zero", bytes: 6 * 2 ** 30, crc32: 0 }));
  await refused(root, dir, PLAIN);
});

test("a state.json entry pointing at a tensor file outside the checkpoint is refused", bounded, async (t) => {
  const { root, dir } = await twoSteps(t);
  // A genuine safetensors file outside, which the state then names through ../ (CRC fixed up).
  rt.serialization.save({ weight: rt.zeros([2, 3]), bias: rt.zeros([2]) }, join(root, "evil.safetensors"));
  const state = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { model: Record<string, { __tensor__: { file: string } }> };
  for (const ref of Object.values(state.model)) ref.__tensor__.file = "../evil";
  replaceListed(dir, "state.json", new TextEncoder().encode(JSON.stringify(state)));
  checkpoint.verifyCheckpoint(dir); // every listed file is intact: only the reference is bad
  assert.throws(() => checkpoint.load(dir), /state\.json names the file "\.\.\/evil\.safetensors"; expected a plain file name/);
});

test("a state.json entry naming a file the manifest does not list is refused", bounded, async (t) => {
  const { dir } = await twoSteps(t);
  renameSync(join(dir, "model.safetensors"), join(dir, "other.safetensors"));
  const state = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { model: Record<string, { __tensor__: { file: string } }> };
  for (const ref of Object.values(state.model)) ref.__tensor__.file = "other";
  replaceListed(dir, "state.json", new TextEncoder().encode(JSON.stringify(state)));
  editManifest(dir, (m) => (m.files = m.files.filter((f) => f.name !== "model.safetensors")));
  assert.throws(() => checkpoint.load(dir), /refers to other\.safetensors, which the manifest does not list/);
});

test("a FIFO in place of a listed file is refused at once, not waited on", bounded, async (t) => {
  const { root, dir } = await twoSteps(t);
  renameSync(join(dir, "model.safetensors"), join(root, "moved"));
  execFileSync("mkfifo", [join(dir, "model.safetensors")]);
  await refused(root, dir, /model\.safetensors is a FIFO; a checkpoint holds only regular files/);
});

test("a FIFO in place of the manifest is refused at once", bounded, async (t) => {
  const { root, dir } = await twoSteps(t);
  renameSync(join(dir, "metadata.json"), join(root, "moved"));
  execFileSync("mkfifo", [join(dir, "metadata.json")]);
  await refused(root, dir, /metadata\.json is a FIFO/);
});

test("a symbolic link in place of a listed file is refused, even to identical bytes", bounded, async (t) => {
  const { root, dir } = await twoSteps(t);
  renameSync(join(dir, "model.safetensors"), join(root, "real.safetensors"));
  symlinkSync(join(root, "real.safetensors"), join(dir, "model.safetensors"));
  await refused(root, dir, /model\.safetensors is a symbolic link/);
});

test("a symbolic link to /dev/zero in place of a listed file is refused without a read", bounded, async (t) => {
  const { root, dir } = await twoSteps(t);
  symlinkSync("/dev/zero", join(dir, "zero"));
  editManifest(dir, (m) => m.files.push({ name: "zero", bytes: 6 * 2 ** 30, crc32: 0 }));
  await refused(root, dir, /zero is a symbolic link/);
});

test("a device node in place of a listed file is refused", { ...bounded, skip: process.getuid?.() !== 0 && "mknod needs root" }, async (t) => {
  const { root, dir } = await twoSteps(t);
  execFileSync("mknod", [join(dir, "zero"), "c", "1", "5"]);
  editManifest(dir, (m) => m.files.push({ name: "zero", bytes: 6 * 2 ** 30, crc32: 0 }));
  await refused(root, dir, /zero is a device/);
});

test("a folder in place of a listed file is refused", bounded, async (t) => {
  const { root, dir } = await twoSteps(t);
  mkdirSync(join(dir, "sub"));
  editManifest(dir, (m) => m.files.push({ name: "sub", bytes: 0, crc32: 0 }));
  await refused(root, dir, /sub is a folder/);
});
