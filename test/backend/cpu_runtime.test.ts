// The cpu backend's runtime controls (thread pool, instruction set) and its argument guards.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { describe, it } from "node:test";
import { defaultNumThreads } from "../../src/backend/cpu/threads.js";
import { cpuBackend, skipWithoutNative } from "./cpu_support.js";

const skip = skipWithoutNative();

/** Runs a snippet in a fresh Node with tsx and the given environment; returns stdout and stderr. */
function runChild(code: string, env: Record<string, string>): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

const PRINT_ISA = `
import { loadAddon } from "./src/backend/index.ts";
import { createCpuBackend } from "./src/backend/cpu/index.ts";
const cpu = createCpuBackend(loadAddon());
console.log(JSON.stringify({ isa: cpu.isa(), threads: cpu.getNumThreads() }));
`;

describe("cpu backend: runtime", () => {
  it("defaultNumThreads: RINGTORCH_NUM_THREADS, then 1 under a multi-process launcher, else all cores", () => {
    assert.equal(defaultNumThreads({ RINGTORCH_NUM_THREADS: "3" }), 3);
    assert.equal(defaultNumThreads({ RINGTORCH_NUM_THREADS: "2", LOCAL_WORLD_SIZE: "4" }), 2);
    assert.equal(defaultNumThreads({ LOCAL_WORLD_SIZE: "2" }), 1);
    assert.equal(defaultNumThreads({ LOCAL_WORLD_SIZE: "1" }), availableParallelism());
    assert.equal(defaultNumThreads({}), availableParallelism());
    assert.throws(() => defaultNumThreads({ RINGTORCH_NUM_THREADS: "two" }), /RINGTORCH_NUM_THREADS must be a whole number/);
    assert.throws(() => defaultNumThreads({ RINGTORCH_NUM_THREADS: "0" }), /from 1 to 256/);
  });

  it("setNumThreads / getNumThreads resize the pool and reject nonsense", { skip }, () => {
    const cpu = cpuBackend()!;
    const before = cpu.getNumThreads();
    try {
      for (const n of [1, 3, 2, 1]) {
        cpu.setNumThreads(n);
        assert.equal(cpu.getNumThreads(), n);
      }
      assert.throws(() => cpu.setNumThreads(0), /setNumThreads must be a whole number/);
      assert.throws(() => cpu.setNumThreads(1.5), /setNumThreads must be a whole number/);
    } finally {
      cpu.setNumThreads(before);
    }
  });

  it("RINGTORCH_CPU_ISA forces a supported ISA and falls back with a warning from an unsupported one", { skip }, () => {
    const portable = runChild(PRINT_ISA, { RINGTORCH_CPU_ISA: "portable", RINGTORCH_NUM_THREADS: "2" });
    assert.equal(portable.status, 0, portable.stderr);
    assert.deepEqual(JSON.parse(portable.stdout), { isa: "portable", threads: 2 });

    const cpu = cpuBackend()!;
    const best = cpu.isa();
    for (const isa of ["avx2", "avx512"]) {
      const r = runChild(PRINT_ISA, { RINGTORCH_CPU_ISA: isa });
      assert.equal(r.status, 0, r.stderr);
      const supported = cpu.setIsa(isa);
      cpu.setIsa("auto");
      if (supported) {
        assert.equal(JSON.parse(r.stdout).isa, isa);
      } else {
        assert.equal(JSON.parse(r.stdout).isa, best, `an unsupported ${isa} must leave the best supported ISA`);
        assert.match(r.stderr, new RegExp(`RINGTORCH_CPU_ISA=${isa}: this CPU or build cannot run those kernels`));
      }
    }
    const bad = runChild(PRINT_ISA, { RINGTORCH_CPU_ISA: "sse9" });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /RINGTORCH_CPU_ISA must be one of portable, avx2, avx512 or auto/);
  });

  it("RINGTORCH_BF16_GEMM picks autocast's GEMM path, warns on one this CPU cannot run, and refuses an unknown one", { skip }, () => {
    const printPath = PRINT_ISA.replace("isa: cpu.isa()", "path: cpu.bf16GemmPath()");
    const portable = runChild(printPath, { RINGTORCH_BF16_GEMM: "portable" });
    assert.equal(portable.status, 0, portable.stderr);
    assert.equal(JSON.parse(portable.stdout).path, "portable");

    const cpu = cpuBackend()!;
    const best = cpu.bf16GemmPath();
    for (const path of ["avx512bf16", "amx"]) {
      const supported = cpu.setBf16GemmPath(path);
      cpu.setBf16GemmPath("auto");
      const r = runChild(printPath, { RINGTORCH_BF16_GEMM: path });
      assert.equal(r.status, 0, r.stderr);
      if (supported) {
        assert.equal(JSON.parse(r.stdout).path, path);
      } else {
        assert.equal(JSON.parse(r.stdout).path, best, "an unsupported path must leave the default");
        assert.match(r.stderr, new RegExp(`RINGTORCH_BF16_GEMM=${path}: this CPU or build cannot run it`));
      }
    }
    const bad = runChild(printPath, { RINGTORCH_BF16_GEMM: "avx512fp16" });
    assert.notEqual(bad.status, 0);
    assert.match(bad.stderr, /RINGTORCH_BF16_GEMM must be one of portable, avx512bf16, amx or auto/);
  });

  it("guards reject arguments that would reach outside the arrays", { skip }, () => {
    const cpu = cpuBackend()!;
    const x = new Float32Array(10);
    const out = new Float32Array(10);
    assert.throws(() => cpu.unary("exp", x, 5, out, 6), /unary: x needs elements \[5, 5\+6\) but has 10/);
    assert.throws(() => cpu.unary("exp", x, -1, out, 2), RangeError);
    assert.throws(() => cpu.copy({ data: x, offset: 0, strides: [5, 1] }, [3, 5], out, 0), /copy: out needs elements/);
    assert.throws(() => cpu.copy({ data: x, offset: 1, strides: [5, 1] }, [2, 5], out, 0), /copy: src .* reaches elements \[1, 10\]/);
    assert.throws(() => cpu.binary("add", { data: x, offset: 0, strides: [1] }, { data: x, offset: 0, strides: [2] }, [6], out), /binary: b/);
    assert.throws(
      () =>
        cpu.matmul({ batch: 1, m: 3, n: 3, k: 4, a: x, aOffset: 0, aRowStride: 4, aColStride: 1, aBatchStride: 0, b: x, bOffset: 0, bRowStride: 3, bColStride: 1, bBatchStride: 0, out, outOffset: 0, alpha: 1, beta: 0 }),
      /matmul: a \(3x4, strides \[4, 1\], batch 1x0, offset 0\) reaches element 11 of 10/,
    );
    assert.throws(() => cpu.unary("exp", x, 0, new Float64Array(10), 10), /arrays must share one dtype/);
    assert.throws(() => cpu.reduce("max", x, 0, 2, 2, 2, out, new Int32Array(1)), /reduce: indices needs elements/);
  });

  it("a native kernel called with a wrong array type throws instead of reading it", { skip }, async () => {
    const { loadAddon } = await import("../../src/backend/index.js");
    const addon = loadAddon()!;
    assert.throws(() => addon.unary(4, [1, 2, 3] as unknown as Float32Array, 0, new Float32Array(3), 3, 0, 0), /must be a typed array/);
    assert.throws(() => addon.unary(4, new Float32Array(3), 0, new Float64Array(3), 3, 0, 0), /mismatched dtypes/);
    assert.throws(() => addon.unary(99, new Float32Array(3), 0, new Float32Array(3), 3, 0, 0), /known op/);
  });
});
