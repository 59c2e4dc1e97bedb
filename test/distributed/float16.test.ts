import { test } from "node:test";
import assert from "node:assert/strict";
import { loadCommNative } from "../../src/distributed/native.js";

/** float16 bits of an exactly representable or rounded value, computed independently from the IEEE 754 definition. */
function halfOf(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | roundEven(a * 2 ** 24);
  const e = Math.floor(Math.log2(a));
  const m = roundEven((a / 2 ** e - 1) * 1024);
  return m === 1024 ? sign | ((e + 16) << 10) : sign | ((e + 15) << 10) | m;
}
function roundEven(v: number): number {
  const f = Math.floor(v);
  const d = v - f;
  return d > 0.5 || (d === 0.5 && f % 2 === 1) ? f + 1 : f;
}

test("float32 → float16 rounds to nearest even, with subnormals, overflow and NaN", () => {
  const native = loadCommNative();
  const values = [0, -0, 1, -2, 0.1, 1 / 3, 65504, 65519, 65520, 1e6, -1e6, 2 ** -14, 2 ** -24, 2 ** -25, 3 * 2 ** -25, 5.960464477539063e-8, 6.1e-5, 1 + 2 ** -11, 1 + 3 * 2 ** -11, NaN];
  const src = new Float32Array(values);
  const dst = new Uint16Array(values.length);
  native.f32ToF16(src, 0, dst, 0, values.length);
  values.forEach((v, i) => assert.equal(dst[i], halfOf(Math.fround(v)), `${v}: got 0x${dst[i].toString(16)}`));
});

test("every float16 survives float16 → float32 → float16 unchanged", () => {
  const native = loadCommNative();
  const all = new Uint16Array(65536).map((_, i) => i);
  const wide = new Float32Array(65536);
  native.f16ToF32(all, 0, wide, 0, 65536);
  const back = new Uint16Array(65536);
  native.f32ToF16(wide, 0, back, 0, 65536);
  for (let i = 0; i < 65536; i++) {
    const nan = (i & 0x7c00) === 0x7c00 && (i & 0x3ff) !== 0;
    if (nan) assert.ok(Number.isNaN(wide[i]));
    else assert.equal(back[i], i, `0x${i.toString(16)} → ${wide[i]} → 0x${back[i].toString(16)}`);
  }
  assert.equal(wide[0x3c00], 1);
  assert.equal(wide[0x0001], 2 ** -24);
  assert.equal(wide[0x7bff], 65504);
  assert.equal(wide[0xfc00], -Infinity);
});
