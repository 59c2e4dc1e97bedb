import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import * as rt from "../../src/index.js";

/** A fresh folder, removed when the test ends. */
export function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-sec-ckpt-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function smallModel(seed = 0): rt.nn.Linear {
  rt.manualSeed(seed);
  return new rt.nn.Linear(3, 2);
}

export function stepDir(root: string, step: number): string {
  return join(root, `step_${String(step).padStart(8, "0")}`);
}

interface ManifestJson {
  files: { name: string; bytes: number; crc32: number }[];
  [key: string]: unknown;
}

/**
 * What an attacker who can write the folder does: edits the manifest (and may list any file with
 * the size and CRC-32 of any bytes, computed here with zlib's own crc32).
 */
export function editManifest(dir: string, edit: (m: ManifestJson) => void): void {
  const path = join(dir, "metadata.json");
  const manifest = JSON.parse(readFileSync(path, "utf8")) as ManifestJson;
  edit(manifest);
  writeFileSync(path, JSON.stringify(manifest));
}

export function entryFor(name: string, bytes: Uint8Array): { name: string; bytes: number; crc32: number } {
  return { name, bytes: bytes.length, crc32: crc32(bytes) >>> 0 };
}

/** Replaces a listed file's content and fixes its manifest entry, so that only the content is wrong. */
export function replaceListed(dir: string, name: string, bytes: Uint8Array): void {
  writeFileSync(join(dir, name), bytes);
  editManifest(dir, (m) => {
    m.files = m.files.map((f) => (f.name === name ? entryFor(name, bytes) : f));
  });
}
