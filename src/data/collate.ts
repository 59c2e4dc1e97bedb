import { tensor } from "../ops/creation.js";
import { stack } from "../ops/join.js";
import { Tensor } from "../tensor/tensor.js";

/**
 * Turns a list of samples into a batch, as torch's default_collate: tensors are stacked along a
 * new first dim; numbers become a tensor (int32 when all are integers, else float32, since
 * JavaScript cannot tell 1.0 from 1); booleans a bool tensor; Float32Array/Float64Array/Int32Array
 * samples a stacked tensor; arrays (tuples) and plain objects are collated position by position
 * and key by key; strings and anything else stay an array.
 */
export function defaultCollate(samples: readonly unknown[]): unknown {
  if (samples.length === 0) throw new RangeError("defaultCollate: cannot collate an empty batch");
  const first = samples[0];
  if (first instanceof Tensor) {
    samples.forEach((s, i) => {
      if (!(s instanceof Tensor)) throw new TypeError(`defaultCollate: sample 0 is a Tensor but sample ${i} is not`);
    });
    return stack(samples as Tensor[], 0);
  }
  if (typeof first === "number") {
    const values = samples as number[];
    return tensor(values, { dtype: values.every(Number.isInteger) ? "int32" : "float32" });
  }
  if (typeof first === "boolean") return tensor(samples as boolean[]);
  if (first instanceof Float32Array || first instanceof Float64Array || first instanceof Int32Array) {
    const len = first.length;
    const flat = new (first.constructor as Float32ArrayConstructor)(len * samples.length);
    samples.forEach((s, i) => {
      const a = s as Float32Array;
      if (a.constructor !== first.constructor || a.length !== len) throw new RangeError(`defaultCollate: sample ${i} is not a ${first.constructor.name} of length ${len} like sample 0`);
      flat.set(a, i * len);
    });
    return tensor(flat, { shape: [samples.length, len] });
  }
  if (Array.isArray(first)) {
    samples.forEach((s, i) => {
      if (!Array.isArray(s) || s.length !== first.length) throw new RangeError(`defaultCollate: every sample must be an array of ${first.length} elements like sample 0; sample ${i} is not`);
    });
    return first.map((_, j) => defaultCollate(samples.map((s) => (s as unknown[])[j])));
  }
  if (first !== null && typeof first === "object" && Object.getPrototypeOf(first) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(first)) out[key] = defaultCollate(samples.map((s) => (s as Record<string, unknown>)[key]));
    return out;
  }
  return [...samples];
}
