import type { MatmulArgs, TypedArray } from "../backend.js";
import { bf16ToFloat, floatToBf16 } from "./convert.js";
import { matmul } from "./matmul.js";

/** The values of a float32 or bfloat16 array rounded to bfloat16, as float32 (exact). */
function rounded(x: TypedArray): Float32Array {
  if (!(x instanceof Float32Array || x instanceof Uint16Array)) {
    throw new TypeError(`matmulBf16: operands must be float32 or bfloat16 (Uint16Array), got ${x.constructor.name}`);
  }
  const out = new Float32Array(x.length);
  if (x instanceof Uint16Array) for (let i = 0; i < x.length; i++) out[i] = bf16ToFloat(x[i]);
  else for (let i = 0; i < x.length; i++) out[i] = bf16ToFloat(floatToBf16(x[i]));
  return out;
}

/** bfloat16 operands, float64 accumulation (the oracle), float32 output. */
export function matmulBf16(args: MatmulArgs): void {
  if (!(args.out instanceof Float32Array)) throw new TypeError(`matmulBf16: out must be a Float32Array, got ${args.out.constructor.name}`);
  matmul({ ...args, a: rounded(args.a), b: rounded(args.b) });
}
