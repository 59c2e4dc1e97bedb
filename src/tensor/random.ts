/**
 * Seeded random numbers: xoshiro128** (fast on 32-bit integer arithmetic, which is what JS has).
 * A Generator's state can be read and restored, so that a resumed run draws the same numbers
 * an uninterrupted one would have drawn.
 */
export class Generator {
  private s = new Uint32Array(4);
  private spareNormal: number | null = null;
  private seedValue = 0;

  constructor(seed = 0) {
    this.manualSeed(seed);
  }

  manualSeed(seed: number | bigint): this {
    // splitmix32 spreads any seed, including 0, over the whole state.
    let x = Number(BigInt.asUintN(32, BigInt(seed))) >>> 0;
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      this.s[i] = (z ^ (z >>> 16)) >>> 0;
    }
    this.spareNormal = null;
    this.seedValue = Number(seed);
    return this;
  }

  initialSeed(): number {
    return this.seedValue;
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
    return { s: Array.from(this.s), spareNormal: this.spareNormal, seed: this.seedValue };
  }

  setState(state: GeneratorState): this {
    if (!state || !Array.isArray(state.s) || state.s.length !== 4) {
      throw new TypeError("Generator.setState: expected a state from getState() ({ s: [4 integers], spareNormal, seed })");
    }
    this.s.set(state.s.map((v) => v >>> 0));
    this.spareNormal = state.spareNormal ?? null;
    this.seedValue = state.seed ?? 0;
    return this;
  }
}

export interface GeneratorState {
  s: number[];
  spareNormal: number | null;
  seed: number;
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

export const defaultGenerator = new Generator(Date.now() >>> 0);

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
