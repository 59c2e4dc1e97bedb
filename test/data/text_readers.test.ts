// Text readers against independent references: Python's csv module and pyarrow
// (tools/text/make_data_fixtures.py), and files written here byte by byte.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { alpacaPrompt, loadCsv, loadJsonl, readAlpaca, readCsv, readLines, readParquet } from "../../src/data/index.js";

const FIX = new URL("../fixtures/text/", import.meta.url).pathname;
const expected = JSON.parse(readFileSync(`${FIX}sample.expected.json`, "utf8"));
const dir = mkdtempSync(join(tmpdir(), "ringtorch-text-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Uint8Array) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};
async function collect<T>(g: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of g) out.push(x);
  return out;
}

describe("JSONL", () => {
  const text = '{"a": 1, "t": "héllo 東京 🙂"}\r\n\n   \n{"a": 2, "t": "x\\ny"}\n{"a": 3, "t": ""}';
  it("reads records across CRLF, empty lines and UTF-8 split between chunks", async () => {
    const p = file("a.jsonl", text);
    const want = [{ a: 1, t: "héllo 東京 🙂" }, { a: 2, t: "x\ny" }, { a: 3, t: "" }];
    assert.deepEqual(await loadJsonl(p), want);
    for (const chunkSize of [1, 2, 3, 5, 7]) {
      const lines = await collect(readLines(p, { chunkSize }));
      assert.deepEqual(lines.map((l) => l.lineNumber), [1, 2, 3, 4, 5]);
      assert.equal(lines[0].line, '{"a": 1, "t": "héllo 東京 🙂"}');
    }
  });
  it("names the line that is not JSON", async () => {
    const p = file("bad.jsonl", '{"a": 1}\n\n{"a": 2,}\n');
    await assert.rejects(loadJsonl(p), (e: Error) => e.message.startsWith(`${p}:3: line 3 is not JSON`));
  });
  it("rejects invalid UTF-8 with the byte range", async () => {
    const p = file("bin.jsonl", Uint8Array.from([0x7b, 0x7d, 0x0a, 0xff, 0xfe, 0x0a]));
    await assert.rejects(loadJsonl(p), /invalid UTF-8/);
  });
});

describe("CSV", () => {
  it("reads what Python's csv module reads: quotes, embedded newlines, escaped quotes, UTF-8, empty fields and lines", async () => {
    for (const chunkSize of [1, 2, 3, 4, 7, 64, 1 << 16]) {
      assert.deepEqual(await loadCsv(`${FIX}sample.csv`, { chunkSize }), expected.csv, `chunkSize ${chunkSize}`);
    }
  });
  it("reads without a header as arrays, with another delimiter", async () => {
    const p = file("t.tsv", 'a\t"b\tc"\n1\t2\n');
    assert.deepEqual(await loadCsv(p, { header: false, delimiter: "\t" }), [["a", "b\tc"], ["1", "2"]]);
  });
  it("says which record has the wrong number of columns, and where a quote never closes", async () => {
    const p = file("cols.csv", 'a,b,c\n1,2,3\n"multi\nline",5\n');
    await assert.rejects(loadCsv(p), (e: Error) => e.message === `${p}:3: the record starting on line 3 has 2 fields, but the header has 3 (a,b,c)`);
    const q = file("open.csv", 'a,b\n1,"never closed\n2,3\n');
    await assert.rejects(loadCsv(q), /:2: a quoted field opened on line 2 is never closed/);
    const r = file("stray.csv", 'a,b\n1,x"y\n');
    await assert.rejects(collect(readCsv(r)), /:2: a quote inside an unquoted field/);
  });
});

describe("Parquet (hyparquet)", () => {
  it("reads pyarrow's snappy file, row group by row group, and in smaller batches", async () => {
    assert.deepEqual(await collect(readParquet(`${FIX}sample.parquet`)), expected.parquet);
    const some = await collect(readParquet(`${FIX}sample.parquet`, { columns: ["id", "label"], batchSize: 128 }));
    assert.deepEqual(some, expected.parquet.map((r: { id: number; label: boolean }) => ({ id: r.id, label: r.label })));
    await assert.rejects(collect(readParquet(`${FIX}sample.parquet`, { columns: ["nope"] })), /no column "nope"; columns: id, text, label, score/);
    await assert.rejects(collect(readParquet(`${FIX}sample.csv`)), /not a readable Parquet file/);
  });
});

describe("Alpaca", () => {
  it("reads JSON and JSONL records and formats Stanford Alpaca's prompts", async () => {
    const recs = [{ instruction: "Define the word.", input: "dog", output: "A domesticated canid." }, { instruction: "Say hi.", output: "Hi." }];
    const a = await collect(readAlpaca(file("a.json", JSON.stringify(recs))));
    const b = await collect(readAlpaca(file("a.jsonl", recs.map((r) => JSON.stringify(r)).join("\n"))));
    assert.deepEqual(a, b);
    assert.equal(alpacaPrompt(a[0]), "Below is an instruction that describes a task, paired with an input that provides further context. Write a response that appropriately completes the request.\n\n### Instruction:\nDefine the word.\n\n### Input:\ndog\n\n### Response:\n");
    assert.equal(alpacaPrompt(a[1]), "Below is an instruction that describes a task. Write a response that appropriately completes the request.\n\n### Instruction:\nSay hi.\n\n### Response:\n");
    await assert.rejects(collect(readAlpaca(file("bad.jsonl", '{"instruction": "x"}'))), /record 0: "output" must be a string, got nothing/);
  });
});
