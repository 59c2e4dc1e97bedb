/**
 * Initialisations of torch.nn.init, in place, drawing from a seeded Generator (the default
 * generator unless one is passed). The formulas (fans, gains, bounds) are PyTorch's; the random
 * streams are ringtorch's own, so values match PyTorch's in distribution, not draw for draw.
 */
import { noGrad } from "../autograd/grad_mode.js";
import { defaultGenerator, type Generator } from "../tensor/random.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { emptyTensor } from "../ops/util.js";
import { checkArity, checkOptions } from "../util/options.js";

export type Nonlinearity = "linear" | "conv1d" | "conv2d" | "conv3d" | "sigmoid" | "tanh" | "relu" | "leaky_relu" | "selu";
export type FanMode = "fan_in" | "fan_out";

/** Writes values from `draw` into t (any layout) without recording autograd. */
function fillWith(t: Tensor, where: string, draw: () => number): Tensor {
  if (t.dtype !== "float32" && t.dtype !== "float64" && t.dtype !== "bfloat16") {
    throw new TypeError(`${where}: expected a floating point tensor, got ${t.describe()}`);
  }
  noGrad(() => {
    const staging = emptyTensor(t.dtype === "float64" ? "float64" : "float32", t.shape);
    const d = staging.storage.data;
    for (let i = 0; i < d.length; i++) d[i] = draw();
    t.copy_(staging);
  });
  return t;
}

export function uniform_(t: Tensor, a = 0, b = 1, generator: Generator = defaultGenerator): Tensor {
  if (!(a <= b)) throw new RangeError(`uniform_: expected a <= b, got a=${a}, b=${b}`);
  return fillWith(t, "uniform_", () => a + (b - a) * generator.random());
}

export function normal_(t: Tensor, mean = 0, std = 1, generator: Generator = defaultGenerator): Tensor {
  if (!(std >= 0)) throw new RangeError(`normal_: std must be non-negative, got ${std}`);
  return fillWith(t, "normal_", () => mean + std * generator.normal());
}

/** Normal(mean, std) redrawn until inside [a, b] (torch's trunc_normal_ up to the sampling method). */
export function truncNormal_(t: Tensor, mean = 0, std = 1, a = -2, b = 2, generator: Generator = defaultGenerator): Tensor {
  if (!(a < b)) throw new RangeError(`truncNormal_: expected a < b, got a=${a}, b=${b}`);
  return fillWith(t, "truncNormal_", () => {
    for (let tries = 0; tries < 1000; tries++) {
      const v = mean + std * generator.normal();
      if (v >= a && v <= b) return v;
    }
    return Math.min(Math.max(mean, a), b);
  });
}

export function constant_(t: Tensor, value: number): Tensor {
  return fillWith(t, "constant_", () => value);
}

export function zeros_(t: Tensor): Tensor {
  return constant_(t, 0);
}

export function ones_(t: Tensor): Tensor {
  return constant_(t, 1);
}

/** The identity matrix in a 2-D tensor (torch's eye_). */
export function eye_(t: Tensor): Tensor {
  if (t.ndim !== 2) throw new RangeError(`eye_: expected a 2-D tensor, got shape ${formatShape(t.shape)}`);
  const cols = t.shape[1];
  let i = 0;
  return fillWith(t, "eye_", () => {
    const v = Math.floor(i / cols) === i % cols ? 1 : 0;
    i++;
    return v;
  });
}

/** The recommended gain for a nonlinearity (torch.nn.init.calculate_gain). */
export function calculateGain(nonlinearity: Nonlinearity, param?: number): number {
  switch (nonlinearity) {
    case "linear":
    case "conv1d":
    case "conv2d":
    case "conv3d":
    case "sigmoid":
      return 1;
    case "tanh":
      return 5 / 3;
    case "relu":
      return Math.SQRT2;
    case "leaky_relu": {
      const slope = param ?? 0.01;
      return Math.sqrt(2 / (1 + slope * slope));
    }
    case "selu":
      return 3 / 4;
    default:
      throw new TypeError(`calculateGain: unsupported nonlinearity ${JSON.stringify(nonlinearity)}`);
  }
}

/** [fanIn, fanOut] of a weight of at least 2 dims: [out, in, ...receptive field]. */
export function calculateFanInAndFanOut(t: Tensor): [number, number] {
  if (t.ndim < 2) {
    throw new RangeError(`fan in and fan out cannot be computed for a tensor with fewer than 2 dimensions, got shape ${formatShape(t.shape)}`);
  }
  const receptive = t.shape.slice(2).reduce((a, b) => a * b, 1);
  return [t.shape[1] * receptive, t.shape[0] * receptive];
}

function fanOf(t: Tensor, mode: FanMode): number {
  const [fanIn, fanOut] = calculateFanInAndFanOut(t);
  if (mode !== "fan_in" && mode !== "fan_out") throw new TypeError(`mode must be "fan_in" or "fan_out", got ${JSON.stringify(mode)}`);
  return mode === "fan_in" ? fanIn : fanOut;
}

export function xavierUniform_(t: Tensor, gain = 1, generator?: Generator): Tensor {
  const [fanIn, fanOut] = calculateFanInAndFanOut(t);
  const bound = Math.sqrt(3) * gain * Math.sqrt(2 / (fanIn + fanOut));
  return uniform_(t, -bound, bound, generator);
}

export function xavierNormal_(t: Tensor, gain = 1, generator?: Generator): Tensor {
  const [fanIn, fanOut] = calculateFanInAndFanOut(t);
  return normal_(t, 0, gain * Math.sqrt(2 / (fanIn + fanOut)), generator);
}

export interface KaimingOptions {
  /** The negative slope of the leaky_relu that follows (0 for relu). */
  a?: number;
  mode?: FanMode;
  nonlinearity?: Nonlinearity;
  generator?: Generator;
}

const KAIMING_OPTIONS = ["a", "mode", "nonlinearity", "generator"];

export function kaimingUniform_(t: Tensor, options: KaimingOptions = {}): Tensor {
  checkArity("kaimingUniform_", arguments, 2, "kaimingUniform_(tensor, { a, mode, nonlinearity, generator })");
  checkOptions("kaimingUniform_", options, KAIMING_OPTIONS);
  const gain = calculateGain(options.nonlinearity ?? "leaky_relu", options.a ?? 0);
  const bound = Math.sqrt(3) * (gain / Math.sqrt(fanOf(t, options.mode ?? "fan_in")));
  return uniform_(t, -bound, bound, options.generator);
}

export function kaimingNormal_(t: Tensor, options: KaimingOptions = {}): Tensor {
  checkArity("kaimingNormal_", arguments, 2, "kaimingNormal_(tensor, { a, mode, nonlinearity, generator })");
  checkOptions("kaimingNormal_", options, KAIMING_OPTIONS);
  const gain = calculateGain(options.nonlinearity ?? "leaky_relu", options.a ?? 0);
  return normal_(t, 0, gain / Math.sqrt(fanOf(t, options.mode ?? "fan_in")), options.generator);
}
