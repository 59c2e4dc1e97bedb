import { isGradEnabled } from "../autograd/grad_mode.js";
import { Module } from "../nn/module.js";
import type { DdpComm } from "./comm.js";
import type { ProcessGroup } from "../distributed/process_group.js";
import { commFor } from "./process_group_comm.js";
import { broadcastCoalesced } from "./broadcast_coalesced.js";
import { overlapPays } from "./overlap_policy.js";
import { Reducer, type CommHook, type LaunchRecord } from "./reducer.js";
import { checkArity, checkOptions } from "../util/options.js";
import { runThenRestore } from "../util/scoped.js";

export interface DistributedDataParallelOptions {
  /** Bucket size cap in MiB (the first bucket is capped at 1 MiB). Default 25. */
  bucketCapMb?: number;
  /** Broadcast rank 0's buffers before every forward. Default true. */
  broadcastBuffers?: boolean;
  /** Reduce parameters that got no gradient as zeros instead of failing. Default false. */
  findUnusedParameters?: boolean;
  /** Make each .grad a view into its bucket, saving a copy and the memory of a second gradient. Default false. */
  gradientAsBucketView?: boolean;
  /** Accepted for PyTorch compatibility; the graph is re-examined every iteration either way. */
  staticGraph?: boolean;
  /**
   * true: each bucket's all-reduce starts on the comm thread as soon as the bucket fills, and
   * overlaps the rest of backward. false: one all-reduce of every bucket, on the training thread,
   * when backward ends. "auto" (default): false only when every rank is on this host and every
   * core already runs a rank's compute threads, where a comm thread can only take a core from
   * compute (overlapPays). A communication hook always overlaps.
   */
  overlapReduction?: boolean | "auto";
  /** The group to synchronise over (default: the default process group). */
  processGroup?: ProcessGroup;
  /** Replaces the process group entirely (tests use it to observe DDP's communication). */
  comm?: DdpComm;
}

const DDP_OPTIONS = ["bucketCapMb", "broadcastBuffers", "findUnusedParameters", "gradientAsBucketView", "staticGraph", "overlapReduction", "processGroup", "comm"];

/**
 * Data parallelism across processes (torch.nn.parallel.DistributedDataParallel). Each rank holds a
 * replica of `module`; construction copies rank 0's parameters and buffers to every rank, and
 * every backward averages the gradients across ranks (while it runs, where a core is free for
 * that: `overlapReduction`), so that every replica takes the same optimizer step. Parameter names
 * gain the `module.` prefix, as in PyTorch.
 */
export class DistributedDataParallel<M extends Module = Module> extends Module {
  readonly module: M;
  readonly reducer: Reducer;
  private readonly comm: DdpComm;
  private readonly broadcastBuffersEnabled: boolean;
  private syncDisabledDepth = 0;
  private joinState: JoinState | null = null;

  constructor(module: M, options: DistributedDataParallelOptions = {}) {
    super();
    checkArity("DistributedDataParallel", arguments, 2, "new DDP(module, { bucketCapMb, broadcastBuffers, findUnusedParameters, … })");
    checkOptions("DistributedDataParallel", options, DDP_OPTIONS);
    if (!(module instanceof Module)) throw new TypeError("DistributedDataParallel: expected an nn.Module to wrap");
    this.module = module;
    this.comm = options.comm ?? commFor(options.processGroup);
    this.broadcastBuffersEnabled = options.broadcastBuffers ?? true;
    const named = [...module.namedParameters()].filter(([, p]) => p.requiresGrad);
    if (named.length === 0) throw new Error("DistributedDataParallel: the module has no parameters that require gradients");
    const bucketCapMb = options.bucketCapMb ?? 25;
    if (!(bucketCapMb > 0)) throw new RangeError(`DistributedDataParallel: bucketCapMb must be positive, got ${bucketCapMb}`);
    this.syncModuleStates(0);
    this.reducer = new Reducer(
      this.comm,
      named.map(([, p]) => p),
      named.map(([n]) => n),
      {
        bucketCapMb,
        findUnusedParameters: options.findUnusedParameters ?? false,
        gradientAsBucketView: options.gradientAsBucketView ?? false,
        overlap: resolveOverlap(options.overlapReduction),
      },
    );
  }

  /** Runs the wrapped module; a backward that follows will synchronise gradients. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override forward(...args: any[]): any {
    const activeRanks = this.joinState ? this.joinState.notifyActive() : null;
    if (activeRanks) this.reducer.divisor = this.joinState!.divideByInitialWorldSize ? this.comm.worldSize : activeRanks.length;
    this.syncBuffers(activeRanks ? activeRanks[0] : 0);
    if (isGradEnabled() && this.syncDisabledDepth === 0) this.reducer.prepareForBackward();
    this.reducer.requireSync = this.syncDisabledDepth === 0;
    return this.module.call(...(args as Parameters<M["forward"]>));
  }

  /**
   * Runs fn (forward and backward of one or more micro-batches) without synchronising gradients:
   * they accumulate locally and are all-reduced, summed, on the first backward after the scope.
   */
  noSync<T>(fn: () => T): T {
    this.syncDisabledDepth++;
    const restore = () => {
      this.syncDisabledDepth--;
    };
    return runThenRestore(fn, restore);
  }

  /**
   * Makes the next backward synchronise gradients although its forward ran under noSync()
   * (torch's reducer.prepare_for_backward). Pipeline schedules run every micro-batch's forward
   * unsynchronised, as forwards and backwards interleave, and call this before a stage's last
   * backward of the step: all the micro-batches' gradients are then averaged once, in it.
   */
  prepareForBackward(): void {
    this.reducer.prepareForBackward();
    this.reducer.requireSync = true;
  }

  /**
   * Trains through fn on inputs that may be uneven across ranks (DDP's join()). A rank whose fn
   * returns early keeps answering the other ranks' collectives with zero gradients until every
   * rank is done, so nobody hangs; then the last rank to finish broadcasts its parameters so all
   * replicas end equal. With divideByInitialWorldSize (default true) gradients are always divided
   * by the full world size, as PyTorch does; otherwise by the number of ranks still training.
   */
  async join<T>(fn: () => T | Promise<T>, options: { divideByInitialWorldSize?: boolean; enable?: boolean } = {}): Promise<T> {
    checkArity("DistributedDataParallel.join", arguments, 2, "await ddp.join(() => …, { divideByInitialWorldSize, enable })");
    checkOptions("DistributedDataParallel.join", options, ["divideByInitialWorldSize", "enable"]);
    if (options.enable === false) return fn();
    if (this.joinState) throw new Error("DistributedDataParallel.join: already inside join()");
    this.joinState = new JoinState(this.comm, options.divideByInitialWorldSize ?? true);
    try {
      const result = await fn();
      this.joinState.shadowUntilAllJoined(
        (root) => this.syncBuffers(root),
        () => this.reducer.shadowBackward(),
      );
      this.syncModuleStates(this.joinState.authoritativeRank());
      return result;
    } finally {
      this.joinState = null;
      this.reducer.divisor = this.comm.worldSize;
    }
  }

  registerCommHook<S>(state: S, hook: CommHook<S>): void {
    this.reducer.registerCommHook(state, hook);
  }

  /** When each bucket's all-reduce started during the last backward (for overlap checks and tracing). */
  get launchRecords(): readonly LaunchRecord[] {
    return this.reducer.launches;
  }

  /** Copies the root's buffers to every rank (before each forward, when broadcastBuffers is on). */
  private syncBuffers(root: number): void {
    if (this.broadcastBuffersEnabled) broadcastCoalesced(this.comm, this.module.buffers(), root);
  }

  /** Copies the root's parameters and buffers to every rank. */
  private syncModuleStates(root: number): void {
    broadcastCoalesced(this.comm, [...this.module.parameters(), ...this.module.buffers()], root);
  }
}

/**
 * The per-iteration agreement of join(): every forward of a training rank, and every round of a
 * finished rank, all-gathers one flag, so each rank learns which ranks still train.
 */
class JoinState {
  private lastActive: number[] = [];

  constructor(
    private readonly comm: DdpComm,
    readonly divideByInitialWorldSize: boolean,
  ) {}

  /** A training rank's flag for this iteration; returns the ranks still training. */
  notifyActive(): number[] {
    return (this.lastActive = this.activeRanks(1));
  }

  private activeRanks(flag: 0 | 1): number[] {
    const flags = this.comm.allGatherInts(flag);
    return flags.flatMap((f, r) => (f ? [r] : []));
  }

  shadowUntilAllJoined(broadcastBuffers: (root: number) => void, shadowBackward: () => void): void {
    for (;;) {
      const active = this.activeRanks(0);
      if (active.length === 0) return;
      this.lastActive = active;
      broadcastBuffers(active[0]);
      shadowBackward();
    }
  }

  /** The last rank to finish: its parameters took every step. */
  authoritativeRank(): number {
    return this.lastActive.length > 0 ? this.lastActive[this.lastActive.length - 1] : this.comm.worldSize - 1;
  }
}

function resolveOverlap(value: boolean | "auto" | undefined): boolean {
  if (value === undefined || value === "auto") return overlapPays();
  if (typeof value !== "boolean") throw new TypeError(`DistributedDataParallel: overlapReduction must be true, false or "auto", got ${JSON.stringify(value)}`);
  return value;
}
