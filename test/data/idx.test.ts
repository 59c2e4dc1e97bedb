// The IDX reader against bytes laid out by hand from the format's description.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, it } from "node:test";
import { parseIdx, readIdx } from "../../src/data/index.js";

describe("IDX files", () => {
  it("reads unsigned bytes with their dims", () => {
    const bytes = Uint8Array.from([0, 0, 0x08, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 250, 251, 252]);
    const { shape, data } = parseIdx(bytes);
    assert.deepEqual(shape, [2, 3]);
    assert.deepEqual([...data], [1, 2, 3, 250, 251, 252]);
  });

  it("reads big-endian 32-bit integers, from a gzip'd file", () => {
    const bytes = Uint8Array.from([0, 0, 0x0c, 1, 0, 0, 0, 2, 0, 0, 1, 0, 0xff, 0xff, 0xff, 0xfe]);
    const dir = mkdtempSync(join(tmpdir(), "ringtorch-idx-"));
    try {
      const path = join(dir, "labels.gz");
      writeFileSync(path, gzipSync(bytes));
      assert.deepEqual([...readIdx(path).data], [256, -2]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rejects files that are not IDX or are truncated", () => {
    assert.throws(() => parseIdx(Uint8Array.from([1, 2, 3, 4])), /not an IDX file/);
    assert.throws(() => parseIdx(Uint8Array.from([0, 0, 0x08, 1, 0, 0, 0, 5, 1, 2])), /should hold 13 bytes/);
    assert.throws(() => parseIdx(Uint8Array.from([0, 0, 0x07, 0])), /unknown IDX type code 0x7/);
  });
});
