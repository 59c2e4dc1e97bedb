import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * The native arena's functions (native/pool/arena.cc), installed by the cpu backend. Each block
 * is a SharedArrayBuffer whose deleter puts it back on a size-class free list when the garbage
 * collector finds its last handle dead, in whichever thread that was.
 */
export interface NativeArena {
  /** A block of `byteLength` bytes; null when none is free and `budget` bytes were already handed out since the last mark. */
  arenaAlloc(byteLength: number, zero: boolean, budget: number): SharedArrayBuffer | null;
  arenaStats(out: Float64Array): void;
  arenaMark(): void;
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
}

type Collect = (options: { type: "minor" | "major" }) => void;

/**
 * When to collect. A dead tensor's block returns only when V8 finds its handle dead, and inside a
 * synchronous loop V8 scavenges only when its own young heap fills: thousands of tensors later,
 * after the loop has cycled through tens or hundreds of megabytes of blocks (fresh pages to fault
 * in, or at best memory that has left the cache). So when a size class has no free block and
 * `budget` bytes were handed out since the last collection, the arena asks for a scavenge (about 40 µs with a loop's few live objects) and
 * goes on: the loop's dead tensors come back, and it cycles through a few megabytes that stay in
 * cache. After each scavenge the budget is the base plus twice what is still held (live tensors,
 * or dead ones already promoted to V8's old generation), as a collector sizes its heap: a forward
 * pass building a large graph costs a logarithmic number of scavenges, a loop that keeps nothing
 * cycles through about the base.
 */
const BASE_BUDGET = Number(process.env.RINGTORCH_ARENA_BUDGET_MB ?? 8) * 1024 * 1024;
const MAX_BUDGET = 1024 * 1024 * 1024;
/** Free bytes kept for reuse; blocks returned beyond it go back to the operating system. */
const FREE_LIMIT = Number(process.env.RINGTORCH_POOL_MB ?? 256) * 1024 * 1024;

const S_HELD = 0, S_FREE = 1, S_FRESH = 2, S_RECYCLED = 3, S_HIGH = 7, S_HELD_HIGH = 8, S_THREAD_HELD = 9;

export class Arena {
  private budget = BASE_BUDGET;
  private readonly stats = new Float64Array(10);
  private collections = 0;

  constructor(
    private readonly native: NativeArena,
    private readonly collect: Collect,
  ) {
    native.arenaSetLimit(FREE_LIMIT);
  }

  /** A SharedArrayBuffer of exactly `byteLength` bytes, zeroed when `zero`. */
  alloc(byteLength: number, zero: boolean): SharedArrayBuffer {
    const sab = this.native.arenaAlloc(byteLength, zero, this.budget);
    return sab ?? this.collectAndAlloc(byteLength, zero);
  }

  private collectAndAlloc(byteLength: number, zero: boolean): SharedArrayBuffer {
    this.collect({ type: "minor" });
    this.collections++;
    this.native.arenaMark();
    this.native.arenaStats(this.stats);
    // What this thread holds: a collection here finds only this thread's dead tensors (DataParallel's
    // replicas each run their own arena policy over the shared free lists).
    this.budget = Math.min(MAX_BUDGET, BASE_BUDGET + 2 * this.stats[S_THREAD_HELD]);
    this.native.arenaDecay();
    return this.native.arenaAlloc(byteLength, zero, Infinity)!;
  }

  read(): ArenaStats {
    const s = this.stats;
    this.native.arenaStats(s);
    return { held: s[S_HELD], free: s[S_FREE], fresh: s[S_FRESH], recycled: s[S_RECYCLED], highWater: s[S_HIGH], heldHighWater: s[S_HELD_HIGH], collections: this.collections };
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
