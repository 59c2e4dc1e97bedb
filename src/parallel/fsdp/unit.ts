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
import { copyOutGathered, FsdpParam, packGradients } from "./param.js";
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
  private readonly tag: SequenceTag;

  constructor(
    readonly index: number,
    readonly name: string,
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
    const input = wire === "bfloat16" && this.flat.dtype !== "bfloat16" ? this.lowered(wire, stride) : this.flat;
    this.tag.write(input.storage.data as TypedArray, input.offset + this.blockLength, phase);
    const output = empty([size * stride], { dtype: wire });
    try {
      this.counts.allGather++;
      this.comm.allGather(output, input);
    } catch (err) {
      throw this.tag.explainFailure(err as Error, phase);
    }
    const gathered = output.storage.data as TypedArray;
    this.tag.check(gathered, stride, this.blockLength, size, phase);
    for (const p of this.params) if (p.isFreed || p.full().length === 0) p.allocateFull();
    copyOutGathered(this.params, gathered, stride, size);
    output.storage.release();
    this.unsharded = true;
  }

  /** The flat shard cast to the wire dtype, with room for the tag after it. */
  private lowered(wire: "bfloat16", stride: number): Tensor {
    const input = empty([stride], { dtype: wire });
    const cast = noGrad(() => to(this.flat.narrow(0, 0, this.blockLength), wire));
    (input.storage.data as Uint16Array).set(cast.storage.data.subarray(cast.offset, cast.offset + this.blockLength) as Uint16Array);
    return input;
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
    const reduceDtype = this.options.policy.reduceDtype ?? this.flat.dtype;
    const send = zeros([size * this.blockLength], { dtype: this.flat.dtype });
    packGradients(this.params, send.storage.data as TypedArray, this.blockLength, size);
    for (const p of this.params) p.unsharded.grad = null;
    const wireIn = reduceDtype === send.dtype ? send : noGrad(() => to(send, reduceDtype));
    let out = this.sharded ? empty([this.blockLength], { dtype: reduceDtype }) : wireIn;
    let work: CommWork | null = null;
    if (this.sharded) {
      this.counts.reduceScatter++;
      work = this.comm.reduceScatter(out, wireIn);
    }
    const replicas = this.comm.replicaSize > 1;
    if (!this.sharded && replicas) {
      this.counts.allReduce++;
      work = this.comm.allReduceReplicas(out);
    }
    this.pending = {
      finish: () => {
        work?.wait();
        if (this.sharded && replicas) {
          this.counts.allReduce++;
          this.comm.allReduceReplicas(out).wait();
        }
        if (out.dtype !== this.flat.dtype) out = noGrad(() => to(out, this.flat.dtype));
        this.assignShardGrads(out);
      },
    };
  }

  /** Waits for the reduction launched in this backward and hands each shard its gradient. */
  finishReduce(): void {
    const p = this.pending;
    this.pending = null;
    p?.finish();
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
