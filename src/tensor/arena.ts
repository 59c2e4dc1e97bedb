import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * The native arena's functions (native/pool/arena.cc), installed by the cpu backend. Each output
 * is a new SharedArrayBuffer over a block's kept backing store; after each collection, a block goes
 * back on its size-class free list once every buffer over it was found dead, in whichever threads
 * held them.
 */
export interface NativeArena {
  /** A block of `byteLength` bytes; null when none is free and `budget` bytes were already handed out since the last mark. */
  arenaAlloc(byteLength: number, zero: boolean, budget: number): SharedArrayBuffer | null;
  arenaStats(out: Float64Array): void;
  arenaMark(): void;
  /** Bytes this thread's JavaScript holds (its blocks not yet reclaimed). */
  arenaHeldHere(): number;
  arenaTrim(): void;
  arenaDecay(): void;
  arenaSetLimit(bytes: number): void;
  arenaResetHighWater(): void;
}

/** What the arena holds, in bytes (ArenaStat's order in native/pool/arena.h). */
export interface ArenaStats {
  /** Blocks JavaScript holds now (live tensors, and dead ones the collector has not yet found). */
  held: number;
  /** Blocks waiting in the free lists. */
  free: number;
  /** Ever taken from the operating system. */
  fresh: number;
  /** Ever handed out again from a free list. */
  recycled: number;
  /** Most held + free at once since resetHighWater(). */
  highWater: number;
  /** Most held at once since resetHighWater(). */
  heldHighWater: number;
  /** Young-generation collections the arena asked for. */
  collections: number;
  /** Full collections the arena asked for. */
  fullCollections: number;
}

/** The arena's collection policy, in bytes (from the environment at startup; see Arena). */
export interface ArenaPolicy {
  /** The most bytes handed out between two scavenges, when no free block fits (RINGTORCH_ARENA_BUDGET_MB); LARGE_BLOCKS blocks of a larger size. */
  budget: number;
  /** This thread's forced scavenges, µs of wall time: an exponential average (NaN before the first), for benches to print. */
  scavengeMicros: number;
  /** Growth of what a thread holds, since its last full collection, that starts another (RINGTORCH_ARENA_FULL_MB). */
  fullMin: number;
  /** Free bytes kept for reuse (RINGTORCH_POOL_MB). */
  freeLimit: number;
  /** Growth of what a thread holds, as a share of what the last full collection left, that starts another once over fullMin (RINGTORCH_ARENA_FULL_GROWTH). */
  fullGrowth: number;
}

/** V8's `gc`: with `{ type: "minor" }` a scavenge; with no argument a full collection. */
type Collect = (options?: { type: "minor" | "major" }) => void;

/**
 * When to collect. A dead tensor's block returns only when V8 finds its handle dead, and inside a
 * synchronous loop V8 scavenges only when its own young heap fills: thousands of tensors later,
 * after the loop has cycled through tens or hundreds of megabytes of blocks (fresh pages to fault
 * in, or at best memory that has left the cache). So when a size class has no free block and the
 * budget was handed out since the last collection, the arena asks for a scavenge (tens of µs with a
 * loop's few live objects) and goes on: the loop's dead tensors come back, and it cycles through a
 * few megabytes that stay in cache. The budget is BUDGET, or LARGE_BLOCKS blocks of the size asked
 * for when that is more, so that a loop over large tensors pays one scavenge per few calls.
 *
 * A tensor alive at two scavenges (an activation kept for backward, a tensor kept across a few
 * calls) is promoted to V8's old generation, and its block comes back only from a full collection.
 * V8 does not know of this memory (arena.cc does not report it: doing so set off incremental
 * markings and full collections inside allocations), so the arena asks for full collections itself,
 * after a scavenge, on either of two signs:
 * - what this thread holds has grown by FULL_GROWTH of what it held after the last full one, and
 *   at least FULL_MIN bytes: a program whose live tensors grow pays a logarithmic number of them,
 *   and dead tensors in the old generation stay within FULL_GROWTH of the live set (or FULL_MIN);
 * - it holds more than FULL_MIN bytes and `fullEvery` scavenges went by since the last full one:
 *   what a phase with many live tensors left behind once they died. `fullEvery` doubles when a full
 *   collection found less than a quarter of what was held dead (the memory was live: a model's
 *   weights), and halves when it found more, as V8's memory reducer backs off.
 * Full collections cost milliseconds (they trace the whole JavaScript heap), scavenges tens of µs.
 */
const MiB = 1024 * 1024;

/** A policy figure from the environment: a finite number >= 0, or a clear error at startup. */
function policyNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name}: expected a number >= 0, got ${JSON.stringify(raw)}`);
  return v;
}

/**
 * 8 MB (RINGTORCH_ARENA_BUDGET_MB). What a forced scavenge costs is set by the bytes written since
 * the last one more than by anything in the JavaScript heap: on this project's Zen 3 VMs an empty
 * scavenge took 19-32 µs in bare node and 30-39 µs with ringtorch loaded (--no-node-snapshot) when run
 * back to back, but 100-350 µs, in bare node too, after 8 MB of writes had pushed V8's own
 * structures (page headers, roots) out of the caches. So a smaller budget pays in loops that drop
 * their outputs (process CPU per call, shared machine, 8 against 2 MB: add 64 KB 14.1 against 10.0
 * µs, add 1 MB 158 against 105, relu 1 MB 153 against 78), but not in training that keeps
 * activations from forward to backward: each scavenge that finds an activation alive a second time
 * promotes it to the old generation, whose blocks only full collections return. Quiet, on the
 * same build, bench/dataparallel.ts's Transformer ran DataParallel at 1.52 / 1.66x one thread with
 * 8 MB, 1.18 / 1.30x with 4 MB and 1.12-1.36x with 2 MB, each thread's CPU per step 2.5 ms higher
 * at 2 MB; bench/mlp.ts gained 7% at 2 MB (4618 against 4301 samples/s), bench/gpt.ts lost 4%
 * (1670 against 1731 tokens/s). A budget chosen from the scavenges' measured cost (session 13) fed
 * on itself and stayed at 8 MB; it was removed.
 */
const BUDGET = policyNumber("RINGTORCH_ARENA_BUDGET_MB", 8) * MiB;
/** The weight of each new scavenge in the average, and the most one sample may count (twice the average): a scavenge the OS preempted reads long. */
const SCAVENGE_WEIGHT = 1 / 8;
const SCAVENGE_CLIP = 2;
const LARGE_BLOCKS = 3;
const FULL_MIN = policyNumber("RINGTORCH_ARENA_FULL_MB", 64) * MiB;
/**
 * 0.5, not 1: with 1, bench/gpt.ts's GPT (about 250 MB live after a full collection) let another
 * 250 MB of dead activations pile up before the next one, and its peak RSS was 570 MB; with 0.5 it
 * is 435-470 MB (0.25: 411 MB), for about one more full collection per step (a 20 MB JavaScript heap: a
 * few ms beside a step of hundreds), whose cost stayed within the shared machine's noise.
 */
const FULL_GROWTH = policyNumber("RINGTORCH_ARENA_FULL_GROWTH", 0.5);
const FULL_EVERY_MIN = 16;
const FULL_EVERY_MAX = 1024;
/**
 * Free blocks a size class kept unused over this many scavenges are halved (arenaDecay). Over one
 * scavenge, classes a loop uses every few steps looked unused and were given back, to be taken fresh
 * again (a steady churn of page faults); over eight, sizes a loop stopped using still drain away.
 */
const DECAY_EVERY = 8;
/**
 * Free bytes kept for reuse; blocks returned beyond it go back to the operating system. 1 GiB: a
 * language model's [tokens, vocabulary] logits (235 MB for GPT-2) must survive the step's other
 * large blocks coming back, or every step pays their first touch again (about 1 s of CPU per
 * 206 MB on these VMs; GPT-2 training 311 → 576 tokens/s with peak RSS still below PyTorch's).
 * Only blocks a job actually used are ever kept, and sizes it stops using drain away (arenaDecay).
 */
const FREE_LIMIT = policyNumber("RINGTORCH_POOL_MB", 1024) * MiB;

const S_HELD = 0, S_FREE = 1, S_FRESH = 2, S_RECYCLED = 3, S_HIGH = 7, S_HELD_HIGH = 8;

export class Arena {
  private readonly stats = new Float64Array(9);
  private collections = 0;
  private fullCollections = 0;
  private heldAfterFull = 0;
  private scavengesSinceFull = 0;
  private fullEvery = FULL_EVERY_MIN;
  private scavengeMicros = NaN;

  constructor(
    private readonly native: NativeArena,
    private readonly collect: Collect,
  ) {
    native.arenaSetLimit(FREE_LIMIT);
  }

  /** A SharedArrayBuffer of exactly `byteLength` bytes, zeroed when `zero`. */
  alloc(byteLength: number, zero: boolean): SharedArrayBuffer {
    const budget = byteLength * LARGE_BLOCKS > BUDGET ? byteLength * LARGE_BLOCKS : BUDGET;
    return this.native.arenaAlloc(byteLength, zero, budget) ?? this.collectAndAlloc(byteLength, zero);
  }

  private collectAndAlloc(byteLength: number, zero: boolean): SharedArrayBuffer {
    const start = performance.now();
    this.collect({ type: "minor" });
    this.noteScavenge((performance.now() - start) * 1000);
    this.collections++;
    this.scavengesSinceFull++;
    const held = this.native.arenaHeldHere();
    const grown = held > this.heldAfterFull + Math.max(FULL_MIN, this.heldAfterFull * FULL_GROWTH);
    if (grown || (held > FULL_MIN && this.scavengesSinceFull >= this.fullEvery)) {
      // `gc()` with no argument, not `gc({ type: "major" })`: the latter leaves the array buffers it
      // found dead to a later sweep, so the held bytes read just after it counted them as live; the
      // policy then took dead tensors for a live set, backed off, and let held memory double.
      this.collect();
      this.fullCollections++;
      this.heldAfterFull = this.native.arenaHeldHere();
      this.scavengesSinceFull = 0;
      const foundDead = held - this.heldAfterFull > held / 4;
      this.fullEvery = foundDead ? Math.max(FULL_EVERY_MIN, this.fullEvery / 2) : Math.min(FULL_EVERY_MAX, this.fullEvery * 2);
    }
    this.native.arenaMark();
    if (this.collections % DECAY_EVERY === 0) this.native.arenaDecay();
    return this.native.arenaAlloc(byteLength, zero, Infinity)!;
  }

  /** The first sample starts the average; later ones count at most SCAVENGE_CLIP times it. */
  private noteScavenge(micros: number): void {
    const last = this.scavengeMicros;
    this.scavengeMicros = Number.isNaN(last) ? micros : last + SCAVENGE_WEIGHT * (Math.min(micros, SCAVENGE_CLIP * last) - last);
  }

  /**
   * Returns to the free lists every block found dead now, whichever thread's collection freed it
   * (the check arenaStats makes), without a collection. See DataParallel's worker (answer()).
   */
  reclaim(): void {
    this.native.arenaStats(this.stats);
  }

  get policy(): ArenaPolicy {
    return {
      budget: BUDGET, scavengeMicros: this.scavengeMicros, fullMin: FULL_MIN, freeLimit: FREE_LIMIT, fullGrowth: FULL_GROWTH,
    };
  }

  read(): ArenaStats {
    const s = this.stats;
    this.native.arenaStats(s);
    return {
      held: s[S_HELD], free: s[S_FREE], fresh: s[S_FRESH], recycled: s[S_RECYCLED], highWater: s[S_HIGH], heldHighWater: s[S_HELD_HIGH],
      collections: this.collections, fullCollections: this.fullCollections,
    };
  }

  resetHighWater(): void {
    this.native.arenaResetHighWater();
  }

  trim(): void {
    this.native.arenaTrim();
  }
}

/**
 * V8's collector as a function of this thread (the flag only adds `gc` to contexts made after it).
 * Array buffers are swept inside the collection rather than on a background thread, so that the
 * blocks a scavenge found dead are back on their free lists when it returns.
 */
export function exposeCollector(): Collect | null {
  try {
    setFlagsFromString("--no-concurrent-array-buffer-sweeping");
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as Collect;
  } catch {
    return null;
  }
}
