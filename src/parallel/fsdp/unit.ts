import { noGrad } from "../../autograd/grad_mode.js";
import type { Module } from "../../nn/module.js";
import type { Parameter } from "../../nn/parameter.js";
import { empty, to, zeros } from "../../ops/creation.js";
import { DistributedError } from "../../distributed/work.js";
import type { Tensor } from "../../tensor/tensor.js";
import type { TypedArray } from "../../tensor/dtype.js";
import type { CommWork } from "../comm.js";
import type { FsdpComm } from "./comm.js";
import type { ResolvedPolicy } from "./mixed_precision.js";
import { copyOutGathered, FsdpParam, packGradients, widenBf16 } from "./param.js";
import { scratchFor } from "./scratch.js";
import { SequenceTag } from "./sequence.js";

export interface UnitOptions {
  reshardAfterForward: boolean;
  policy: ResolvedPolicy;
}

/** A gradient reduction in flight: what finishes it writes the shard gradients. */
interface PendingReduce {
  finish(): void;
}

/**
 * One FSDP unit (FSDP2's FSDPParamGroup): the parameters of one module that no inner unit took.
 * All of them travel in one all-gather before the module's forward (and before its backward when
 * resharded after forward) and one reduce-scatter after its backward. This rank's padded chunks
 * lie back to back in `flat`; with a sequence tag after them, so that every gather also checks
 * that all ranks are gathering the same unit.
 */
export class FsdpUnit {
  readonly flat: Tensor;
  /** Elements of one rank's block of the gather (the padded chunks, without the tag). */
  readonly blockLength: number;
  isRoot = false;
  /** Off inside noSync / setRequiresGradientSync(false): gradients accumulate unsharded. */
  requiresGradientSync = true;
  /** Collectives run by this unit, by kind (for tests and the bench). */
  readonly counts = { allGather: 0, reduceScatter: 0, allReduce: 0 };
  private unsharded = false;
  private ready = 0;
  private readyFlags: Uint8Array;
  private pending: PendingReduce | null = null;
  /** The reduce-scatter's output, which the shard gradients are views of. */
  private gradOut: Tensor | null = null;
  private readonly tag: SequenceTag;

  constructor(
    readonly index: number,
    public name: string,
    readonly module: Module,
    readonly params: readonly FsdpParam[],
    flat: Tensor,
    blockLength: number,
    private readonly comm: FsdpComm,
    readonly options: UnitOptions,
  ) {
    this.flat = flat;
    this.blockLength = blockLength;
    this.readyFlags = new Uint8Array(params.length);
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

  /** Called by the tree once a gradient of this unit is ready (and hence a backward is running). */
  onGradReadyHook: (() => void) | null = null;

  /** All-gathers the parameters (one collective), unless they are gathered already. */
  unshard(phase: "forward" | "backward"): void {
    if (this.isUnsharded || this.params.length === 0) return;
    const size = this.comm.shardSize;
    const wire = this.options.policy.paramDtype === "bfloat16" ? "bfloat16" : this.flat.dtype;
    const stride = this.blockLength + SequenceTag.slots(wire);
    const scratch = scratchFor(this.comm);
    // The gather runs in place: this rank's block of the shared buffer is its input, so the flat
    // shard needs no room for the tag (and stays exactly the size the ZeRO formula counts).
    scratch.settle();
    const output = scratch.get("comm", wire, size * stride, false);
    const input = output.narrow(0, this.comm.shardRank * stride, stride);
    const block = input.storage.data as TypedArray;
    if (wire === this.flat.dtype) block.set(this.flat.storage.data.subarray(this.flat.offset, this.flat.offset + this.blockLength) as never, input.offset);
    else block.set(noGrad(() => to(this.flat, wire)).storage.data as never, input.offset);
    this.tag.write(block, input.offset + this.blockLength, phase);
    try {
      this.counts.allGather++;
      this.comm.allGather(output, input);
    } catch (err) {
      throw this.tag.explainFailure(err as Error, phase);
    }
    const gathered = (output.storage.data as TypedArray).subarray(output.offset, output.offset + output.numel);
    this.tag.check(gathered, stride, this.blockLength, size, phase);
    for (const p of this.params) if (p.isFreed || p.full().length === 0) p.allocateFull();
    copyOutGathered(this.params, gathered, stride, size);
    this.unsharded = true;
  }

  /** Frees the unsharded parameters' memory (their tensors stay, empty, until the next gather). */
  reshard(): void {
    if (!this.sharded || !this.unsharded) return;
    for (const p of this.params) p.free();
    this.unsharded = false;
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
    if (this.ready === this.params.filter((p) => p.unsharded.requiresGrad).length) this.launchReduce();
  }

  /**
   * Starts the gradient reduction (reduce-scatter into the shards, then the average over replicas)
   * unless gradients accumulate unsynchronised. Parameters without a gradient count as zeros.
   */
  launchReduce(): void {
    if (this.pending || !this.requiresGradientSync || !this.params.some((p) => p.unsharded.grad)) return;
    const size = this.comm.shardSize;
    const dtype = this.flat.dtype;
    const reduceDtype = this.options.policy.reduceDtype ?? dtype;
    const scratch = scratchFor(this.comm);
    // Shard gradients are views of gradOut; while the last step's are still held (not zeroed to
    // null), this step's sum goes to a fresh buffer and is added to them.
    const gradOut = (this.gradOut ??= zeros([this.blockLength], { dtype }));
    const holdsOut = this.params.some((p) => p.shard.grad?.storage === gradOut.storage);
    const target = holdsOut ? zeros([this.blockLength], { dtype }) : gradOut;
    scratch.settle();
    const send = this.sharded ? scratch.get("comm", dtype, size * this.blockLength, true) : target;
    if (!this.sharded) send.storage.data.fill(0, send.offset, send.offset + send.numel);
    packGradients(this.params, send.storage.data as TypedArray, send.offset, this.blockLength, size);
    for (const p of this.params) p.unsharded.grad = null;
    const replicas = this.comm.replicaSize > 1;
    let work: CommWork | null = null;
    let wireOut: Tensor | null = null;
    // The reduction lands once: waited for, and widened out of the shared bfloat16 buffer before
    // the next unit's reduction may reuse it (the scratch settles it then).
    let landed = false;
    const land = () => {
      if (landed) return;
      landed = true;
      work?.wait();
      if (wireOut && wireOut !== target) widenBf16(wireOut.storage.data as Uint16Array, wireOut.offset, target.storage.data as Float32Array, target.offset, this.blockLength);
    };
    if (this.sharded) {
      const wireIn = reduceDtype === dtype ? send : this.lowered(send, reduceDtype as "bfloat16", "sendWire");
      wireOut = reduceDtype === dtype ? target : scratch.get("outWire", reduceDtype, this.blockLength, false);
      this.counts.reduceScatter++;
      work = this.comm.reduceScatter(wireOut, wireIn);
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

export { DistributedError };
