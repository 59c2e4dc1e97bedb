import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as rt from "../../src/index.js";
import { exposeCollector } from "../../src/tensor/arena.js";
import { MappedFile, setOffloadHome } from "../../src/tensor/mapped.js";

/**
 * Tensor memory in a memory-mapped file (src/tensor/mapped.ts, native/offload/mapped.cc), checked
 * against the file's own bytes read with fs: what a tensor holds is what the file holds, also after
 * its pages were dropped from the process. Skipped without the native addon.
 */
const native = rt.getBackend().name === "cpu";

function withDir(fn: (dir: string) => void): void {
  // Under the working directory (a disk), not tmpdir(), which may be tmpfs.
  const dir = mkdtempSync(join(process.cwd(), ".mapped-test-"));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("a mapped tensor starts at zero, its values are the file's bytes, and they survive dropping its pages", { skip: !native }, () => {
  withDir((dir) => {
    const f = new MappedFile(dir);
    const a = f.zeros([3, 5]);
    const b = f.zeros([1000], "float64");
    assert.deepEqual([...a.data()], new Array(15).fill(0));
    a.copy_(rt.arange(15).reshape([3, 5]).to("float32"));
    b.fill_(2.5);
    assert.ok(f.release(b) > 0, "whole pages of b dropped");
    const bytes = readFileSync(f.path);
    // a's region starts at 0; b's at the next page.
    assert.deepEqual([...new Float32Array(bytes.buffer, bytes.byteOffset, 15)], [...Array(15).keys()]);
    const page = 4096;
    assert.deepEqual([...new Float64Array(bytes.buffer.slice(bytes.byteOffset + page, bytes.byteOffset + page + 8000))], new Array(1000).fill(2.5));
    assert.deepEqual([...b.data()], new Array(1000).fill(2.5), "values read back after the release");
    assert.equal(a.add(1).sum().item(), 120, "kernels read mapped memory");
    const s = f.stats();
    assert.equal(s.mappedBytes, 60 + 8000);
    assert.equal(s.fileBytes, 2 * page + 4096);
    f.close();
    assert.equal(existsSync(f.path), false, "close removes the file");
    assert.equal(b.sum().item(), 2500, "tensors stay valid after close");
    assert.throws(() => f.zeros([2]), /closed/);
  });
});

test("zerosLike of an offloaded parameter is made in its file, so the optimizer's state is", { skip: !native }, () => {
  withDir((dir) => {
    const f = new MappedFile(dir);
    const p = new rt.nn.Parameter(f.zeros([64]));
    setOffloadHome(p, { file: f, state: true });
    const opt = new rt.optim.AdamW([p], { lr: 0.1 });
    const ref = new rt.nn.Parameter(rt.zeros([64]));
    const refOpt = new rt.optim.AdamW([ref], { lr: 0.1 });
    for (const [q, o] of [[p, opt], [ref, refOpt]] as const) {
      q.grad = rt.arange(64).to("float32");
      o.step();
    }
    assert.deepEqual([...p.data()], [...ref.data()]);
    const state = opt.state.get(p)!;
    assert.ok(f.holds(state.exp_avg as rt.Tensor) && f.holds(state.exp_avg_sq as rt.Tensor));
    assert.equal(f.holds(rt.zerosLike(ref)), false);
    f.close();
  });
});

test("a MappedFile refuses tmpfs, removes files of dead processes, and names a missing directory", { skip: !native }, () => {
  if (existsSync("/dev/shm") && statSync("/dev/shm").isDirectory()) assert.throws(() => new MappedFile("/dev/shm"), /tmpfs/);
  withDir((dir) => {
    // A pid above the kernel's limit (2^22) is never alive.
    writeFileSync(join(dir, "ringtorch-offload-p4194305-0.bin"), "stale");
    writeFileSync(join(dir, "unrelated.bin"), "keep");
    const f = new MappedFile(dir);
    assert.deepEqual(readdirSync(dir).sort(), [f.path.slice(dir.length + 1), "unrelated.bin"].sort());
    f.close();
  });
  assert.throws(() => new MappedFile(join(process.cwd(), "no-such-dir-for-mapped")), /no-such-dir-for-mapped/);
});

test("a closed file's descriptor goes with its last tensor, and its handle may die after that", { skip: !native }, async () => {
  // The order that once corrupted the heap: close() drops the handle's reference, the last tensor's
  // death closes the descriptor and frees the file's record, and only then does the handle die, whose
  // finalizer read (and decremented) the freed record. Every descriptor must come back, no sooner
  // than the last tensor of its file dies.
  const gc = exposeCollector()!;
  /** This process's descriptors open on files of `dir` (a removed file reads "<path> (deleted)"). */
  const openFds = (dir: string) =>
    readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir + "/");
      } catch {
        return false; // closed since the listing
      }
    }).length;
  // Up to 3 full collections, each followed by a turn of the event loop (handle finalizers run
  // from there), stopping early once `done` holds. A full collection costs ~40 ms with the library
  // loaded, and this runs 100 settles: waiting for a descriptor to close stops at the first
  // collection that closed it, while proving one stays open needs all three.
  const settle = async (done: () => boolean = () => false) => {
    for (let i = 0; i < 3 && !done(); i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const dir = mkdtempSync(join(process.cwd(), ".mapped-test-"));
  try {
    for (let round = 0; round < 50; round++) {
      let kept: rt.Tensor | null = (() => {
        const f = new MappedFile(dir);
        const t = f.zeros([1024]).fill_(round);
        f.close();
        return t;
      })();
      await settle();
      assert.equal(openFds(dir), 1, "a closed file's descriptor stays open while a tensor maps it");
      assert.equal(kept.sum().item(), 1024 * round, "the tensor still reads its file's pages");
      kept = null;
      await settle(() => openFds(dir) === 0);
      assert.equal(openFds(dir), 0, "the descriptor closes with the file's last tensor");
    }
    // A handle whose finalizer a round's early stop left pending dies here, after its tensor.
    await settle();
    assert.deepEqual(readdirSync(dir), [], "close() removed every file");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
