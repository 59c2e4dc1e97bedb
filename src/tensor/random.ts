/**
 * Seeded random numbers: xoshiro128** (fast on 32-bit integer arithmetic, which is what JS has).
 * A Generator's state can be read and restored, so that a resumed run draws the same numbers
 * an uninterrupted one would have drawn.
 */
export class Generator {
  private s = new Uint32Array(4);
  private spareNormal: number | null = null;
  private seedValue = 0n;

  constructor(seed: number | bigint = 0) {
    this.manualSeed(seed);
  }

  /**
   * Seeds the generator. Like PyTorch, any 64-bit integer is a seed: a number (exact only up to
   * 2^53, so larger ones must be bigints) or a bigint in [-2^63, 2^64); negatives wrap to 64 bits.
   */
  manualSeed(seed: number | bigint): this {
    const wide = checkSeed(seed);
    // splitmix32 spreads any seed, including 0, over the whole state; the high 32 bits, when
    // present, are spread the same way and folded in (32-bit seeds keep their original streams).
    const spread = (start: number, into: (i: number, v: number) => void) => {
      let x = start >>> 0;
      for (let i = 0; i < 4; i++) {
        x = (x + 0x9e3779b9) >>> 0;
        let z = x;
        z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
        z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
        into(i, (z ^ (z >>> 16)) >>> 0);
      }
    };
    spread(Number(wide & 0xffffffffn), (i, v) => (this.s[i] = v));
    const high = Number(wide >> 32n);
    if (high !== 0) spread(high ^ 0x5bd1e995, (i, v) => (this.s[i] = (this.s[i] ^ v) >>> 0));
    // xoshiro's all-zero state is a fixed point; no seed may land there.
    if (this.s.every((v) => v === 0)) this.s[0] = 1;
    this.spareNormal = null;
    this.seedValue = wide;
    return this;
  }

  /** The seed as PyTorch reports it (unsigned 64-bit): a number when exact, else a bigint. */
  initialSeed(): number | bigint {
    return this.seedValue <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(this.seedValue) : this.seedValue;
  }

  /** The next uniformly distributed 32-bit unsigned integer. */
  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  random(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Standard normal (Box–Muller; the second value of each pair is kept for the next call). */
  normal(): number {
    if (this.spareNormal !== null) {
      const v = this.spareNormal;
      this.spareNormal = null;
      return v;
    }
    let u = 0;
    while (u === 0) u = this.random();
    const v = this.random();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Uniform integer in [low, high). */
  randint(low: number, high: number): number {
    return low + Math.floor(this.random() * (high - low));
  }

  getState(): GeneratorState {
    const seed = this.initialSeed();
    return { s: Array.from(this.s), spareNormal: this.spareNormal, seed: typeof seed === "bigint" ? seed.toString() : seed };
  }

  setState(state: GeneratorState): this {
    if (!state || !Array.isArray(state.s) || state.s.length !== 4) {
      throw new TypeError("Generator.setState: expected a state from getState() ({ s: [4 integers], spareNormal, seed })");
    }
    this.s.set(state.s.map((v) => v >>> 0));
    this.spareNormal = state.spareNormal ?? null;
    this.seedValue = BigInt(state.seed ?? 0);
    return this;
  }
}

export interface GeneratorState {
  s: number[];
  spareNormal: number | null;
  /** A decimal string when beyond 2^53 (state travels as JSON in checkpoints). */
  seed: number | string;
}

const U64 = 1n << 64n;

/** A seed as an unsigned 64-bit bigint, or a TypeError saying what a seed may be. */
function checkSeed(seed: unknown): bigint {
  let wide: bigint;
  if (typeof seed === "bigint") wide = seed;
  else if (typeof seed === "number" && Number.isSafeInteger(seed)) wide = BigInt(seed);
  else if (typeof seed === "number" && Number.isInteger(seed)) {
    throw new TypeError(`manualSeed: ${seed} is beyond 2^53, where a JavaScript number is not exact; pass it as a bigint (e.g. ${BigInt(seed)}n, or BigInt("…") from its digits)`);
  } else throw new TypeError(`manualSeed: a seed is an integer (a number or a bigint), got ${typeof seed === "number" ? seed : typeof seed}`);
  if (wide < -(1n << 63n) || wide >= U64) throw new RangeError(`manualSeed: a seed must fit in 64 bits ([-2^63, 2^64)), got ${wide}`);
  return BigInt.asUintN(64, wide);
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * PyTorch's default generator starts from a fixed seed (67280421310721), not the clock, so an
 * unseeded script draws the same numbers on every rank and every run (an unseeded randomSplit
 * then agrees across ranks). Seed it with manualSeed for a different stream.
 */
export const DEFAULT_SEED = 67280421310721;
export const defaultGenerator = new Generator(DEFAULT_SEED);

/** Seeds the default generator (torch.manual_seed). */
export function manualSeed(seed: number | bigint): Generator {
  return defaultGenerator.manualSeed(seed);
}

export function getRngState(): GeneratorState {
  return defaultGenerator.getState();
}

export function setRngState(state: GeneratorState): void {
  defaultGenerator.setState(state);
}
