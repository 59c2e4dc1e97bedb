// cpu vs reference for the fused optimizer updates and sumSquares.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { FLOAT_TYPES, Rng, assertArraysClose, forEachIsa, forEachThreadCount, randomArray, referenceBackend as ref, skipWithoutNative, tol } from "./cpu_support.js";

const skip = skipWithoutNative();
const LENGTHS = [1, 7, 8, 9, 33, 1000];
// Long enough to be split over the pool's threads, for the first configuration of each test only.
const LONG = 140001;

describe("cpu backend: optimizer steps", { skip }, () => {
  it("adamStep matches Adam, AdamW, amsgrad and maximize over several steps", () => {
    const rng = new Rng(31);
    forEachIsa((isa, cpu) => {
      for (const ctor of FLOAT_TYPES) {
        for (const n of [...LENGTHS, LONG]) {
          for (const [decoupled, amsgrad, maximize, weightDecay] of [
            [false, false, false, 0], [false, false, true, 0.01], [true, false, false, 0.05], [true, true, true, 0.1], [false, true, false, 0],
          ].slice(0, n === LONG ? 1 : 5) as [boolean, boolean, boolean, number][]) {
            const param = [randomArray(ctor, n, rng), new ctor(n)];
            param[1] = param[0].slice();
            const m = [new ctor(n), new ctor(n)];
            const v = [new ctor(n), new ctor(n)];
            const maxV = amsgrad ? [new ctor(n), new ctor(n)] : [null, null];
            for (let step = 1; step <= 3; step++) {
              const grad = randomArray(ctor, n, rng);
              for (const side of [0, 1]) {
                (side === 0 ? cpu : ref).adamStep({
                  n, param: param[side], grad, expAvg: m[side], expAvgSq: v[side], maxExpAvgSq: maxV[side],
                  lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay, decoupled, step, maximize,
                });
              }
            }
            const what = `${isa} ${ctor.name} n=${n} adam decoupled=${decoupled} amsgrad=${amsgrad} maximize=${maximize} wd=${weightDecay}`;
            const t = tol(param[0], [1e-6, 1e-5], [1e-14, 1e-12]);
            assertArraysClose(param[0], param[1], ...t, what);
            assertArraysClose(m[0], m[1], ...t, `${what} expAvg`);
            assertArraysClose(v[0], v[1], ...t, `${what} expAvgSq`);
            if (amsgrad) assertArraysClose(maxV[0]!, maxV[1]!, ...t, `${what} maxExpAvgSq`);
          }
        }
      }
    });
  });

  it("sgdStep matches plain, momentum, dampening, nesterov, weight decay and maximize", () => {
    const rng = new Rng(32);
    forEachIsa((isa, cpu) => {
      forEachThreadCount((threads) => {
        for (const ctor of FLOAT_TYPES) {
          for (const n of [...LENGTHS, LONG]) {
            for (const [momentum, dampening, nesterov, weightDecay, maximize] of [
              [0.9, 0.1, false, 1e-4, true], [0, 0, false, 0, false], [0.9, 0, false, 0, false], [0.8, 0, true, 0.01, false],
            ].slice(0, n === LONG ? 1 : 4) as [number, number, boolean, number, boolean][]) {
              const param = [randomArray(ctor, n, rng), new ctor(n)];
              param[1] = param[0].slice();
              const buf = momentum ? [new ctor(n), new ctor(n)] : [null, null];
              for (let step = 1; step <= 3; step++) {
                const grad = randomArray(ctor, n, rng);
                for (const side of [0, 1]) {
                  (side === 0 ? cpu : ref).sgdStep({
                    n, param: param[side], grad, momentumBuffer: buf[side], firstStep: step === 1,
                    lr: 0.1, momentum, dampening, nesterov, weightDecay, maximize,
                  });
                }
              }
              const what = `${isa} threads=${threads} ${ctor.name} n=${n} sgd momentum=${momentum} nesterov=${nesterov} maximize=${maximize}`;
              assertArraysClose(param[0], param[1], ...tol(param[0], [1e-6, 1e-6], [1e-15, 1e-14]), what);
              if (buf[0]) assertArraysClose(buf[0], buf[1]!, ...tol(param[0], [1e-6, 1e-6], [1e-15, 1e-14]), `${what} buffer`);
            }
          }
        }
      });
    });
  });

  it("sumSquares accumulates in float64", () => {
    const rng = new Rng(33);
    forEachIsa((isa, cpu) => {
      for (const ctor of FLOAT_TYPES) {
        for (const n of [0, 1, 5, 31, 100000]) {
          const x = randomArray(ctor, n + 3, rng, 10);
          const got = cpu.sumSquares(x, 3, n);
          const want = ref.sumSquares(x, 3, n);
          assert.ok(Math.abs(got - want) <= 1e-12 * Math.max(1, want), `${isa} ${ctor.name} n=${n}: ${got} vs ${want}`);
        }
      }
    });
  });
});
