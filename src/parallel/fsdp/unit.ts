import { noGrad } from "../../autograd/grad_mode.js";
import type { Module } from "../../nn/module.js";
import type { Parameter } from "../../nn/parameter.js";
import { to, zeros } from "../../ops/creation.js";
import { DistributedError } from "../../distributed/work.js";
import type { Tensor } from "../../tensor/tensor.js";
import { type DType, itemSize, type TypedArray } from "../../tensor/dtype.js";
import type { CommWork } from "../comm.js";
import type { FsdpComm } from "./comm.js";
import type { ResolvedPolicy } from "./mixed_precision.js";
import type { ResolvedOffload } from "./offload.js";
import { copyOutGathered, FsdpParam, packGradients, widenBf16 } from "./param.js";
import { scratchFor } from "./scratch.js";
import { type Phase, SequenceTag } from "./sequence.js";

export interface UnitOptions {
  reshardAfterForward: boolean;
  /** Free the gathered parameters when the unit's backward is done (else they stay allocated, their shards views of their rows: ZeRO-2). */
  reshardAfterBackward: boolean;
  policy: ResolvedPolicy;
  /** Where the shards live when offloaded to a memory-mapped file. */
  offload: ResolvedOffload | null;
}

/** An all-gather in flight: the buffer it writes, until its rows are copied out. */
interface PendingGather {
  work: CommWork;
  output: Tensor;
  stride: number;
  phase: Phase;
}

/** A gradient reduction in flight: what finishes it writes the shard gradients. */
interface PendingReduce {
  finish(): void;
}

/**
 * One FSDP unit (FSDP2's FSDPParamGroup): the parameters of one module that no inner unit took.
 * All of them travel in one all-gather before the module's forward (and before its backward when
 * resharded after forward) and one reduce-scatter after its backward. This rank's padded chunks
 * lie back to back in `flat` (or, under ZeRO-2, in the parameters' own rows); a sequence tag
 * follows them in the gather, so that every gather also checks that all ranks are gathering the
 * same unit. A gather can be started ahead (prefetch) and finished when the unit is reached.
 */
export class FsdpUnit {
  /** This rank's padded chunks back to back; null when the shards are views of the parameters' rows (ZeRO-2) or the parameters themselves (NO_SHARD). */
  readonly flat: Tensor | null;
  readonly dtype: DType;
  /** Elements of one rank's block of the gather (the padded chunks, without the tag). */
  readonly blockLength: number;
  isRoot = false;
  /** Off inside noSync / setRequiresGradientSync(false): gradients accumulate unsharded. */
  requiresGradientSync = true;
  /** Collectives run by this unit, by kind (for tests and the bench). */
  readonly counts = { allGather: 0, reduceScatter: 0, allReduce: 0 };
  /** Called by the tree once a gradient of this unit is ready (and hence a backward is running). */
  onGradReadyHook: (() => void) | null = null;
  /** Called by the tree whenever this unit's gathered memory changes (memory accounting). */
  onMemoryHook: (() => void) | null = null;
  private unsharded = false;
  private gathering: PendingGather | null = null;
  private ready = 0;
  private readyFlags: Uint8Array;
  private readonly needGrad: number;
  private pending: PendingReduce | null = null;
  /** The reduce-scatter's output, which the shard gradients are views of. */
  private gradOut: Tensor | null = null;
  private readonly tag: SequenceTag;

  constructor(
    readonly index: number,
    public name: string,
    readonly module: Module,
    readonly params: readonly FsdpParam[],
    flat: Tensor | null,
    dtype: DType,
    blockLength: number,
    private readonly comm: FsdpComm,
    readonly options: UnitOptions,
  ) {
    this.flat = flat;
    this.dtype = dtype;
    this.blockLength = blockLength;
    this.readyFlags = new Uint8Array(params.length);
    this.needGrad = params.filter((p) => p.unsharded.requiresGrad).length;
    this.tag = new SequenceTag(index, name);
    params.forEach((p, i) => {
      if (p.unsharded.requiresGrad) p.unsharded.registerPostAccumulateGradHook(() => this.onGradReady(i));
    });
  }

  /** Names the unit by its place in the tree, once the root is known (for messages). */
  rename(name: string): void {
    this.name = name;
    this.tag.rename(name);
  }

  /** Whether this unit shards at all (a shard group of one keeps whole parameters: NO_SHARD). */
  get sharded(): boolean {
    return this.comm.shardSize > 1;
  }

  get isUnsharded(): boolean {
    return this.unsharded || !this.sharded;
  }

  /** Bytes of unsharded parameter memory this unit holds now (gathered, or kept under ZeRO-2). */
  get heldBytes(): number {
    if (!this.sharded) return 0;
    return this.params.reduce((n, p) => n + (p.isFreed ? 0 : p.layout.numel * itemSize(p.unsharded.dtype)), 0);
  }

  /** Whether an all-gather of this unit is in flight (prefetched, not yet waited for). */
  get isGathering(): boolean {
    return this.gathering !== null;
  }

  /** All-gathers the parameters (one collective), unless they are gathered already, and waits. */
  unshard(phase: Phase): void {
    this.startUnshard(phase);
    this.waitUnshard();
  }

  /**
   * Starts the all-gather on the comm worker (prefetch: the caller computes meanwhile), unless the
   * parameters are gathered or being gathered already. `waitUnshard` finishes it.
   */
  startUnshard(phase: Phase): void {
    if (this.isUnsharded || this.gathering || this.params.length === 0) return;
    const size = this.comm.shardSize;
    const wire = this.options.policy.paramDtype === "bfloat16" ? "bfloat16" : this.dtype;
    const stride = this.blockLength + SequenceTag.slots(wire);
    // The gather runs in place: this rank's block of the gather buffer is its input, so the flat
    // shard needs no room for the tag (and stays exactly the size the ZeRO formula counts).
    const scratch = scratchFor(this.comm);
    const output = scratch.acquire(wire, size * stride);
    try {
      const input = output.narrow(0, this.comm.shardRank * stride, stride);
      if (this.options.offload?.params) this.options.offload.file.populate(this.flat, false);
      this.packShards(input, wire);
      // Offloaded, the shard was paged in to be sent; the gather has its copy now.
      if (this.options.offload?.params) this.options.offload.file.release(this.flat);
      this.tag.write(input.storage.data as TypedArray, input.offset + this.blockLength, phase);
      this.counts.allGather++;
      this.gathering = { work: this.comm.allGather(output, input), output, stride, phase };
    } catch (err) {
      scratch.release(output);
      throw this.tag.explainFailure(err as Error, phase);
    }
  }

  /** Finishes the all-gather in flight: checks every rank's tag and copies the rows into the parameters. */
  waitUnshard(): void {
    const g = this.gathering;
    if (!g) return;
    this.gathering = null;
    const scratch = scratchFor(this.comm);
    try {
      try {
        g.work.wait();
      } catch (err) {
        throw this.tag.explainFailure(err as Error, g.phase);
      }
      const size = this.comm.shardSize;
      const gathered = (g.output.storage.data as TypedArray).subarray(g.output.offset, g.output.offset + g.output.numel);
      this.tag.check(gathered, g.stride, this.blockLength, size, g.phase);
      for (const p of this.params) if (p.isFreed) p.allocateFull();
      copyOutGathered(this.params, gathered, g.stride, size);
      this.unsharded = true;
      this.onMemoryHook?.();
    } finally {
      scratch.release(g.output);
    }
  }

  /** This rank's shard rows, laid out as its block of the gather (each parameter's padded chunk at its offset), in the wire dtype. */
  private packShards(input: Tensor, wire: DType): void {
    const block = input.storage.data as TypedArray;
    const flat = this.flat;
    if (flat && wire === this.dtype) {
      block.set(flat.storage.data.subarray(flat.offset, flat.offset + this.blockLength) as never, input.offset);
      return;
    }
    if (flat) {
      block.set(noGrad(() => to(flat, wire)).storage.data as never, input.offset);
      return;
    }
    // Shards that are views of the parameters' rows (ZeRO-2), in the parameters' dtype.
    for (const p of this.params) block.set(p.shardData() as never, input.offset + p.offset);
  }

  /**
   * Frees the unsharded parameters' memory (their tensors stay, empty, until the next gather); a
   * gather still in flight (a prefetch nobody used) is finished first, and its rows dropped. With
   * reshardAfterBackward off the memory stays, and only counts as stale until the next gather.
   */
  reshard(): void {
    if (this.gathering) this.waitUnshard();
    if (!this.sharded || !this.unsharded) return;
    for (const p of this.params) p.free();
    this.unsharded = false;
    this.onMemoryHook?.();
  }

  /** Module fields hold the unsharded parameters for forward, the shards otherwise. */
  installUnsharded(): void {
    if (this.sharded) for (const p of this.params) p.install(p.unsharded);
  }

  installShards(): void {
    if (this.sharded) for (const p of this.params) p.install(p.shard);
  }

  resetBackward(): void {
    this.ready = 0;
    this.readyFlags.fill(0);
  }

  private onGradReady(i: number): void {
    this.onGradReadyHook?.();
    if (this.readyFlags[i]) return;
    this.readyFlags[i] = 1;
    this.ready++;
    if (this.ready !== this.needGrad) return;
    // Every gradient of the unit is final, so no node that reads its parameters is left: reduce,
    // and free the gathered parameters now rather than at the end of the whole backward.
    this.launchReduce();
    this.reshard();
  }

  /**
   * Starts the gradient reduction (reduce-scatter into the shards, then the average over replicas)
   * unless gradients accumulate unsynchronised. Parameters without a gradient count as zeros.
   */
  launchReduce(): void {
    if (this.pending || !this.requiresGradientSync || !this.params.some((p) => p.unsharded.grad)) return;
    const size = this.comm.shardSize;
    const dtype = this.dtype;
    const reduceDtype = this.options.policy.reduceDtype ?? dtype;
    const scratch = scratchFor(this.comm);
    // Shard gradients are views of gradOut; while the last step's are still held (not zeroed to
    // null), this step's sum goes to a fresh buffer and is added to them.
    const off = this.options.offload;
    const gradOut = (this.gradOut ??= off?.grads ? off.file.zeros([this.blockLength], dtype) : zeros([this.blockLength], { dtype }));
    const holdsOut = this.params.some((p) => p.shard.grad?.storage === gradOut.storage);
    const target = holdsOut ? zeros([this.blockLength], { dtype }) : gradOut;
    scratch.settle();
    off?.file.populate(target, true);
    // A buffer of the unit's gather size (see Scratch.acquire), busy until the reduction lands.
    const send = this.sharded ? scratch.acquire(dtype, size * (this.blockLength + SequenceTag.slots(dtype)), true).narrow(0, 0, size * this.blockLength) : target;
    if (!this.sharded) send.storage.data.fill(0, send.offset, send.offset + send.numel);
    packGradients(this.params, send.storage.data as TypedArray, send.offset, this.blockLength, size);
    // Sharded, the unsharded gradients are autograd's own (the shards' are views of gradOut);
    // unsharded (NO_SHARD) they may be last step's views of gradOut, accumulated into.
    for (const p of this.params) releaseGrad(p.unsharded, this.sharded && p.unsharded.grad?.storage !== gradOut.storage);
    const replicas = this.comm.replicaSize > 1;
    let work: CommWork | null = null;
    let wireOut: Tensor | null = null;
    // The reduction lands once: waited for, and widened out of the shared bfloat16 buffer before
    // the next unit's reduction may reuse it (the scratch settles it then).
    let landed = false;
    const land = () => {
      if (landed) return;
      landed = true;
      try {
        work?.wait();
      } finally {
        if (this.sharded) scratch.release(send);
      }
      if (wireOut && wireOut !== target) widenBf16(wireOut.storage.data as Uint16Array, wireOut.offset, target.storage.data as Float32Array, target.offset, this.blockLength);
      // Offloaded, the gradient shards leave memory until the optimizer reads them, rather than a
      // whole model's worth staying resident at the end of backward.
      if (!replicas) off?.file.release(target);
    };
    if (this.sharded) {
      try {
        const wireIn = reduceDtype === dtype ? send : this.lowered(send, reduceDtype as "bfloat16", "sendWire");
        wireOut = reduceDtype === dtype ? target : scratch.get("outWire", reduceDtype, this.blockLength, false);
        this.counts.reduceScatter++;
        work = this.comm.reduceScatter(wireOut, wireIn);
      } catch (err) {
        landed = true;
        scratch.release(send);
        throw err;
      }
      scratch.inFlight = { wait: land };
    } else if (replicas) {
      this.counts.allReduce++;
      work = this.comm.allReduceReplicas(target);
    }
    this.pending = {
      finish: () => {
        land();
        if (this.sharded && replicas) {
          this.counts.allReduce++;
          this.comm.allReduceReplicas(target).wait();
          off?.file.release(target);
        }
        this.assignShardGrads(target);
      },
    };
  }

  /** Waits for the reduction launched in this backward and hands each shard its gradient. */
  finishReduce(): void {
    const p = this.pending;
    this.pending = null;
    p?.finish();
  }

  /** `t` cast to the wire dtype, in the role's scratch buffer. */
  private lowered(t: Tensor, wire: "bfloat16", role: string): Tensor {
    const out = scratchFor(this.comm).get(role, wire, t.numel, false);
    const cast = noGrad(() => to(t, wire));
    (out.storage.data as Uint16Array).set(cast.storage.data.subarray(cast.offset, cast.offset + t.numel) as Uint16Array, out.offset);
    return out;
  }

  private assignShardGrads(flatGrad: Tensor): void {
    noGrad(() => {
      for (const p of this.params) {
        if (!p.unsharded.requiresGrad) continue;
        const rows = p.layout.rowsOf(this.comm.shardRank);
        const g = flatGrad.narrow(0, p.offset, rows * p.layout.rowNumel).view(p.shard.shape);
        if (p.shard.grad) p.shard.grad.add_(g);
        else p.shard.grad = g;
      }
    });
  }

  /** The unsharded parameters, for messages and tests. */
  unshardedParams(): Parameter[] {
    return this.params.map((p) => p.unsharded);
  }
}

/**
 * Drops an unsharded gradient once it is packed for the reduce-scatter. Its memory goes back to the
 * pool at once (FSDP2 frees it there too) when the gradient owns it, as autograd's leaf gradients
 * do: the next unit's gradients of the same shapes reuse it, instead of a model's worth of dead
 * gradients per step waiting for the collector (RSS). A hook that kept the tensor must copy it.
 */
function releaseGrad(p: Parameter, recycle: boolean): void {
  const g = p.grad;
  p.grad = null;
  if (recycle && g && !g.gradFn && g.offset === 0 && g.numel === g.storage.length) g.storage.release();
}

export { DistributedError };
