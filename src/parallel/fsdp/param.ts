import type { Module } from "../../nn/module.js";
import { Parameter } from "../../nn/parameter.js";
import { allocate } from "../../tensor/storage.js";
import { arrayTypeOf } from "../../tensor/dtype.js";
import type { TypedArray } from "../../tensor/dtype.js";
import type { Tensor } from "../../tensor/tensor.js";
import { contiguousData } from "../../ops/util.js";
import { ShardLayout } from "./layout.js";

/**
 * Where a parameter's shard lives: `flat`, rows of its unit's flat shard (the unsharded memory is
 * freed between uses: ZeRO-3); `rows`, a view of this rank's rows of the unsharded parameter, whose
 * memory then stays allocated between steps (ZeRO-2: the optimizer updates those rows in place and
 * the next gather brings the other ranks'); `self`, the parameter itself (a shard group of one).
 */
export type ShardHome = { kind: "flat"; flat: Tensor } | { kind: "rows" } | { kind: "self" };

/**
 * One parameter under FSDP (FSDP2's FSDPParam). `unsharded` is the module's own Parameter object:
 * forward runs with it, autograd saves it and accumulates its gradient, so hooks on it keep
 * working; between uses its memory is freed (an empty array under the same storage) and gathered
 * again before the next use. `shard` is this rank's rows (see ShardHome): `module.parameters()`
 * returns it outside forward, and the optimizer steps on it.
 */
export class FsdpParam {
  readonly layout: ShardLayout;
  readonly shard: Parameter;
  /** Where the module tree holds this parameter (a parameter may sit in two places within a unit). */
  readonly places: [Module, string][] = [];
  private readonly empty: TypedArray;

  constructor(
    /** Dotted name under the module fullyShard was applied to. */
    readonly name: string,
    readonly unsharded: Parameter,
    shardSize: number,
    readonly shardRank: number,
    /** Where this parameter's padded chunk starts in its unit's flat shard. */
    readonly offset: number,
    readonly home: ShardHome,
  ) {
    this.layout = new ShardLayout(unsharded.shape, shardSize);
    this.empty = new (arrayTypeOf(unsharded.dtype))(new SharedArrayBuffer(0), 0, 0);
    const rows = this.layout.rowsOf(shardRank);
    const n = rows * this.layout.rowNumel;
    const from = this.rowStart * this.layout.rowNumel;
    if (home.kind === "self") {
      this.shard = unsharded;
    } else if (home.kind === "rows") {
      const asRows = unsharded.ndim === 0 ? unsharded.detach().view([1]) : unsharded.detach();
      this.shard = new Parameter(asRows.narrow(0, this.rowStart, rows), unsharded.requiresGrad);
    } else {
      this.shard = new Parameter(home.flat.narrow(0, offset, n).view(this.layout.shardShape(shardRank)), unsharded.requiresGrad);
      home.flat.storage.data.set(this.full().subarray(from, from + n), home.flat.offset + offset);
    }
  }

  /** This rank's rows as a contiguous array (they are: a shard is a dim-0 slice). */
  shardData(): TypedArray {
    const s = this.shard;
    return s.storage.data.subarray(s.offset, s.offset + s.numel) as TypedArray;
  }

  get rowStart(): number {
    return this.layout.rowStart(this.shardRank);
  }

  get isFreed(): boolean {
    return this.unsharded.numel > 0 && this.unsharded.storage.data.length === 0;
  }

  /** The unsharded parameter's elements (it is contiguous: FSDP allocates it). */
  full(): TypedArray {
    return this.unsharded.storage.data;
  }

  /** Gives the unsharded parameter fresh memory to gather into (contents arbitrary). */
  allocateFull(): TypedArray {
    const data = allocate(this.unsharded.dtype, this.layout.numel, false).data;
    this.unsharded.storage.swapData(data);
    return data;
  }

  /**
   * Frees the unsharded parameter's memory; the tensor objects stay, empty, until the next gather.
   * The memory goes back to the pool at once (nothing touches it again: every use of the parameter
   * reads its storage's current array), so the next unit's gather of the same shapes reuses it
   * instead of waiting for the collector to find it dead. `recycle` false leaves it to the
   * collector: the memory the model was built in, which pooled would keep a whole model's worth
   * where at most two gathered units reuse it.
   */
  free(recycle = true): void {
    if (this.isFreed || this.home.kind !== "flat") return;
    if (recycle) this.unsharded.storage.release();
    this.unsharded.storage.swapData(this.empty);
  }

  /** Points every place in the module tree at `p` (the unsharded parameter in forward, else the shard). */
  install(p: Parameter): void {
    for (const [m, key] of this.places) (m as unknown as Record<string, unknown>)[key] = p;
  }

  /** The unsharded gradient as a contiguous array in the parameter's dtype. */
  gradData(): TypedArray {
    const g = contiguousData(this.unsharded.grad!, this.unsharded.dtype);
    return g.storage.data.subarray(g.offset, g.offset + g.numel) as TypedArray;
  }
}

/**
 * Rank r's block of a gathered flat holds each parameter's chunk at its offset: copies out the real
 * rows. A parameter whose shard is a view of its own rows (ZeRO-2) has them in place already.
 */
export function copyOutGathered(params: readonly FsdpParam[], gathered: TypedArray, blockLength: number, size: number): void {
  const widen = gathered instanceof Uint16Array;
  for (const p of params) {
    const full = p.full();
    const rowNumel = p.layout.rowNumel;
    for (let r = 0; r < size; r++) {
      const n = p.layout.rowsOf(r) * rowNumel;
      if (n === 0 || (r === p.shardRank && p.home.kind === "rows")) continue;
      const src = r * blockLength + p.offset;
      const dst = p.layout.rowStart(r) * rowNumel;
      if (!widen) full.set(gathered.subarray(src, src + n), dst);
      else widenBf16(gathered as Uint16Array, src, full as Float32Array, dst, n);
    }
  }
}

/** bfloat16 is the upper half of a float32: widening is exact. */
export function widenBf16(src: Uint16Array, from: number, dst: Float32Array, to: number, n: number): void {
  const bits = new Uint32Array(dst.buffer, dst.byteOffset, dst.length);
  for (let i = 0; i < n; i++) bits[to + i] = src[from + i] << 16;
}

/** Lays the unsharded gradients out as the reduce-scatter's input: rank r's block holds every parameter's chunk r (zero padded). */
export function packGradients(params: readonly FsdpParam[], send: TypedArray, at: number, blockLength: number, size: number): void {
  for (const p of params) {
    if (!p.unsharded.grad) continue;
    const g = p.gradData();
    const rowNumel = p.layout.rowNumel;
    for (let r = 0; r < size; r++) {
      const n = p.layout.rowsOf(r) * rowNumel;
      if (n === 0) continue;
      const src = p.layout.rowStart(r) * rowNumel;
      send.set(g.subarray(src, src + n), at + r * blockLength + p.offset);
    }
  }
}
