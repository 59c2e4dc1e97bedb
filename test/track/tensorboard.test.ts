import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { track } from "../../src/index.js";
import { crc32c, maskedCrc32c } from "../../src/track/tensorboard/crc32c.js";
import { crc32cBitwise, decodeHParams, readEvents, type DecodedEvent } from "./event_reader.js";

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "track-tb-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const eventFile = (dir: string) => join(dir, readdirSync(dir).find((f) => f.startsWith("events.out.tfevents."))!);
const scalars = (events: DecodedEvent[], tag: string) =>
  events.flatMap((e) => (e.values ?? []).filter((v) => v.tag === tag && v.simpleValue !== undefined).map((v) => [e.step, v.simpleValue!]));

test("CRC-32C matches the published check value and the masked form", () => {
  const check = new TextEncoder().encode("123456789");
  assert.equal(crc32c(check), 0xe3069283);
  assert.equal(crc32cBitwise(check), 0xe3069283);
  // Mask: rotate right by 15, add 0xa282ead8, as TFRecord's crc32c::Mask.
  const c = 0xe3069283;
  assert.equal(maskedCrc32c(check), ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0);
  const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 31 + 7) & 0xff);
  assert.equal(crc32c(bytes), crc32cBitwise(bytes));
});

test("scalars, text and hparams with end metrics, decoded by a reader written from the formats", (t) => {
  const dir = tempDir(t);
  const run = track.init({ id: "tb", dir, config: { lr: 0.01, optimizer: "adam", nesterov: true, model: { width: 64 } }, systemMetrics: false });
  run.defineMetric("train/*", { stepMetric: "globalStep" });
  run.defineMetric("val/acc", { summary: "max" });
  const logged: [number, number][] = [];
  for (let i = 0; i < 5; i++) {
    const loss = 1 / (i + 3);
    logged.push([i * 8, loss]);
    run.log({ "train/loss": loss, globalStep: i * 8, "val/acc": [0.5, 0.7, 0.6, 0.65, 0.62][i] });
  }
  run.log({ note: "epoch done ✓" });
  run.finish();

  const events = readEvents(eventFile(join(dir, "rank-0")));
  assert.equal(events[0].fileVersion, "brain.Event:2");
  // Scalars are float32 on disk; train/* goes against globalStep, the rest against the run's step.
  assert.deepEqual(scalars(events, "train/loss"), logged.map(([s, v]) => [s, Math.fround(v)]));
  assert.deepEqual(scalars(events, "val/acc"), [0.5, 0.7, 0.6, 0.65, 0.62].map((v, i) => [i, Math.fround(v)]));
  assert.deepEqual(scalars(events, "globalStep"), [0, 8, 16, 24, 32].map((v, i) => [i, v]));
  const text = events.flatMap((e) => (e.values ?? []).filter((v) => v.tag === "note").map((v) => ({ step: e.step, ...v })));
  assert.equal(text.length, 1);
  assert.equal(text[0].step, 5);
  assert.equal(text[0].pluginName, "text");
  assert.equal(text[0].dtype, 7);
  assert.deepEqual(text[0].shape, [1]);
  assert.deepEqual(text[0].strings, ["epoch done ✓"]);

  const hp = events.flatMap((e) => (e.values ?? []).filter((v) => v.pluginName === "hparams").map((v) => ({ tag: v.tag, ...decodeHParams(v.pluginContent!) })));
  assert.deepEqual(hp.map((h) => h.tag), ["_hparams_/session_start_info", "_hparams_/experiment", "_hparams_/session_end_info"]);
  assert.deepEqual(hp[0].sessionStart, { hparams: { lr: 0.01, optimizer: "adam", nesterov: true, "model.width": 64 }, group: "tb" });
  assert.deepEqual(hp[1].experiment!.hparams, [
    { name: "lr", type: 3 },
    { name: "optimizer", type: 1 },
    { name: "nesterov", type: 2 },
    { name: "model.width", type: 3 },
  ]);
  assert.deepEqual(hp[1].experiment!.metrics.sort(), ["globalStep", "train/loss", "val/acc"]);
  assert.deepEqual(hp[2].sessionEnd, { status: 1 });
  // Every event's wall time is the log call's, the same as metrics.jsonl's _time.
  const jsonl = track.readJsonl(join(dir, "rank-0", "metrics.jsonl")).map((l) => l.value._time);
  const valueTimes = events.filter((e) => e.values?.some((v) => v.pluginName !== "hparams")).map((e) => e.wallTime);
  assert.deepEqual([...new Set(valueTimes)], [...new Set(jsonl)]);
  assert.equal(run.summary["val/acc"], 0.7);
});

test("a resumed run appends to the same event file after cutting a torn record", (t) => {
  const dir = tempDir(t);
  const first = track.init({ id: "tbr", dir, systemMetrics: false });
  first.log({ loss: 3 }, { step: 0 });
  first.log({ loss: 2 }, { step: 1 });
  const file = eventFile(join(dir, "rank-0"));
  // What a kill in the middle of a write leaves: a length field and half a record.
  first.finish();
  appendFileSync(file, Buffer.from([40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 9, 9]));
  const second = track.init({ id: "tbr", dir, resume: "allow", systemMetrics: false });
  second.log({ loss: 1 });
  second.finish();
  assert.deepEqual(readdirSync(join(dir, "rank-0")).filter((f) => f.includes("tfevents")), [file.split("/").pop()]);
  assert.ok(statSync(file).size > 0);
  const events = readEvents(file);
  assert.deepEqual(scalars(events, "loss"), [[0, 3], [1, 2], [2, 1]]);
});
