import { queueCallback } from "../autograd/engine.js";
import { noGrad } from "../autograd/grad_mode.js";
import type { Tensor } from "../tensor/tensor.js";
import { formatShape } from "../tensor/shape.js";
import type { Storage } from "../tensor/storage.js";
import { zeros } from "../ops/creation.js";
import { assignBuckets, Bucket, MIB } from "./bucket.js";
import { commTraceTag, TID_TRAIN, traceInstant, traceNow, traceSpan, tracing } from "../util/trace.js";
import type { CommWork, DdpComm } from "./comm.js";

/** The bucket handed to a communication hook (torch.distributed.GradBucket). */
export class GradBucket {
  constructor(
    private readonly bucket: Bucket,
    private readonly last: boolean,
  ) {}
  index(): number {
    return this.bucket.index;
  }
  /** The flat gradient buffer; a hook may reduce it in place or return a new tensor of its size. */
  buffer(): Tensor {
    return this.bucket.buffer;
  }
  parameters(): readonly Tensor[] {
    return this.bucket.params;
  }
  isLast(): boolean {
    return this.last;
  }
}

/** A reduction in flight; wait() returns the reduced flat gradients of the bucket. */
export interface CommHookFuture {
  wait(): Tensor;
}

export type CommHook<S> = (state: S, bucket: GradBucket) => CommHookFuture;

export interface ReducerOptions {
  bucketCapMb: number;
  findUnusedParameters: boolean;
  gradientAsBucketView: boolean;
  /**
   * Reduce each bucket on the comm thread as it fills, while backward goes on; false: one
   * all-reduce of every bucket on the training thread when backward ends (see overlapPays).
   * A communication hook always reduces bucket by bucket, overlapped.
   */
  overlap: boolean;
}

/** When each bucket's reduction started, counted in parameter gradients that were ready then. */
export interface LaunchRecord {
  bucket: number;
  readyParams: number;
  totalParams: number;
}

/**
 * The engine of DDP (PyTorch's Reducer). A post-accumulate-grad hook on every parameter marks its
 * gradient ready; when a bucket is complete, its all-reduce starts at once, in bucket order on
 * every rank, while backward goes on. When backward ends (an engine callback), the reducer waits
 * for the remaining reductions.
 *
 * Where overlap cannot pay (no core free for the comm thread, DDP's `overlapReduction`), the
 * buckets are instead reduced together, on the training thread, once backward ends.
 *
 * By default a bucket is reduced where its gradients lie: one coalesced all-reduce over the
 * parameters' `.grad` tensors, averaging in its last reduction step, so the main thread copies
 * nothing and no second copy of the gradients is kept. With a communication hook or
 * gradientAsBucketView the gradients go through the bucket's flat buffer, as in PyTorch.
 */
export class Reducer {
  readonly buckets: Bucket[];
  /** Averaging divisor: the world size, or the number of ranks still active under join(). */
  divisor: number;
  /** Off inside noSync(): gradients accumulate locally and are reduced on a later backward. */
  requireSync = true;
  launches: LaunchRecord[] = [];
  private readonly locate: { bucket: Bucket; slot: number }[];
  private readonly ready: Uint8Array;
  private readyCount = 0;
  private nextToLaunch = 0;
  /** Per bucket, what waits for its reduction and leaves the result in place. */
  private completions: ((() => void) | null)[] = [];
  /** The gradient tensors being reduced in place, per parameter, and the memory they cover. */
  private readonly grads: (Tensor | null)[];
  private claimed = new Map<Storage, [number, number][]>();
  private expectingBackward = false;
  private finalizeQueued = false;
  private hook: { state: unknown; fn: CommHook<unknown> } | null = null;

  constructor(
    private readonly comm: DdpComm,
    private readonly params: readonly Tensor[],
    private readonly names: readonly string[],
    private readonly options: ReducerOptions,
  ) {
    this.divisor = comm.worldSize;
    this.buckets = assignBuckets(params, options.bucketCapMb * MIB).map((indices, b) => new Bucket(b, indices, params));
    this.locate = new Array(params.length);
    for (const bucket of this.buckets) bucket.params.forEach((_, slot) => (this.locate[bucket.paramIndices[slot]] = { bucket, slot }));
    this.ready = new Uint8Array(params.length);
    this.grads = new Array(params.length).fill(null);
    params.forEach((p, i) => p.registerPostAccumulateGradHook(() => this.markReady(i)));
    this.resetIteration();
  }

  registerCommHook<S>(state: S, hook: CommHook<S>): void {
    if (this.hook) throw new Error("registerCommHook: a communication hook is already registered; it can be registered only once");
    this.hook = { state, fn: hook as CommHook<unknown> };
  }

  /** Called by DDP's forward when a backward that must synchronise will follow. */
  prepareForBackward(): void {
    this.expectingBackward = true;
    this.launches = [];
  }

  /** Whether bucket reductions wait for the end of backward and run there as one. */
  private get deferred(): boolean {
    return !this.options.overlap && this.hook === null;
  }

  /** Whether buckets go through their flat buffers rather than being reduced in the gradients. */
  private get flat(): boolean {
    return this.hook !== null || this.options.gradientAsBucketView;
  }

  private markReady(i: number): void {
    if (!this.requireSync || !this.expectingBackward) return;
    if (this.ready[i]) {
      throw new Error(
        `DistributedDataParallel: parameter ${this.names[i]} received its gradient twice in one backward pass. ` +
          "A parameter used in several forward calls needs one backward per forward (or noSync() around the extra ones).",
      );
    }
    if (!this.finalizeQueued) {
      this.finalizeQueued = true;
      queueCallback(() => this.finalize());
    }
    this.takeGradient(i);
    this.ready[i] = 1;
    this.readyCount++;
    const { bucket } = this.locate[i];
    if (--bucket.pending === 0 && !this.deferred) this.launchReadyBuckets();
  }

  /** Hands parameter i's gradient (zeros if it has none) to its bucket's reduction. */
  private takeGradient(i: number): void {
    const p = this.params[i];
    if (this.flat) {
      const { bucket, slot } = this.locate[i];
      const view = bucket.gradView(slot);
      const grad = p.grad;
      noGrad(() => {
        if (!grad) view.zero_();
        else if (grad.storage !== view.storage || grad.offset !== view.offset) view.copy_(grad);
      });
      return;
    }
    let grad = p.grad ?? noGrad(() => zeros(p.shape, { dtype: p.dtype }));
    // The reduction writes the gradient in place: it must be contiguous, and no memory may be
    // reduced twice (a gradient the user set to share another's memory gets its own copy).
    if (!grad.isContiguous() || !this.claim(grad)) {
      grad = noGrad(() => grad.clone());
      this.claim(grad);
    }
    p.grad = grad;
    this.grads[i] = grad;
  }

  /** Records the memory a gradient covers; false if part of it is already being reduced. */
  private claim(grad: Tensor): boolean {
    const ranges = this.claimed.get(grad.storage) ?? [];
    const [lo, hi] = [grad.offset, grad.offset + grad.numel];
    if (ranges.some(([a, b]) => lo < b && a < hi)) return false;
    ranges.push([lo, hi]);
    this.claimed.set(grad.storage, ranges);
    return true;
  }

  /** The tensors a bucket's reduction covers: its flat buffer, or its gradients where they lie. */
  private reducedTensors(bucket: Bucket): Tensor[] {
    return this.flat ? [bucket.buffer] : bucket.paramIndices.map((i) => this.grads[i]!);
  }

  /** Every bucket at once, on this thread: one coalesced all-reduce, in bucket order. */
  private reduceAllNow(): void {
    for (const bucket of this.buckets) this.recordLaunch(bucket);
    if (tracing.on) commTraceTag.current = { bucket: -1, params: this.params.length };
    try {
      this.comm.allReduceAverage(this.buckets.flatMap((b) => this.reducedTensors(b)), this.divisor);
    } finally {
      commTraceTag.current = null;
    }
  }

  private recordLaunch(bucket: Bucket): void {
    this.launches.push({ bucket: bucket.index, readyParams: this.readyCount, totalParams: this.params.length });
  }

  private launchReadyBuckets(): void {
    while (this.nextToLaunch < this.buckets.length && this.buckets[this.nextToLaunch].pending === 0) {
      const bucket = this.buckets[this.nextToLaunch++];
      this.recordLaunch(bucket);
      if (!tracing.on) {
        this.completions[bucket.index] = this.reduce(bucket, this.reducedTensors(bucket));
        continue;
      }
      // The comm thread's span of this reduction names the bucket; the instant marks when it was handed over.
      traceInstant(TID_TRAIN, `DDP bucket ${bucket.index} ready`, { bucket: bucket.index, params: bucket.params.length });
      commTraceTag.current = { bucket: bucket.index, params: bucket.params.length };
      try {
        this.completions[bucket.index] = this.reduce(bucket, this.reducedTensors(bucket));
      } finally {
        commTraceTag.current = null;
      }
    }
  }

  /**
   * Starts the bucket's reduction off the main thread: the registered hook, or the built-in
   * average of `tensors` in place. Returns what waits for it.
   */
  private reduce(bucket: Bucket, tensors: readonly Tensor[]): () => void {
    if (this.hook) {
      const future = this.hook.fn(this.hook.state, new GradBucket(bucket, bucket.index === this.buckets.length - 1));
      return () => {
        const reduced = future.wait();
        if (reduced !== bucket.buffer) noGrad(() => bucket.buffer.copy_(reduced));
      };
    }
    const work: CommWork = this.comm.allReduceAverageAsync(tensors, this.divisor);
    return () => work.wait();
  }

  /** Resets the per-iteration state (every bucket waits for all of its parameters again). */
  private resetIteration(): void {
    this.ready.fill(0);
    this.readyCount = 0;
    this.nextToLaunch = 0;
    this.completions = this.buckets.map(() => null);
    this.grads.fill(null);
    // A new map, not clear(): V8 keeps a cleared map's old table (in the old generation, as the
    // map is long-lived) pointing at its former keys, so every step's gradient storages were kept
    // past their death until a full collection — up to 64 MiB of dead gradients on the MLP bench.
    this.claimed = new Map();
    for (const b of this.buckets) b.pending = b.params.length;
    this.finalizeQueued = false;
    this.expectingBackward = false;
  }

  private finalize(): void {
    const traceStart = tracing.on ? traceNow() : 0;
    try {
      const unused = this.params.map((_, i) => i).filter((i) => !this.ready[i]);
      if (unused.length > 0 && !this.options.findUnusedParameters) {
        const listed = unused.map((i) => `${this.names[i]} ${formatShape(this.params[i].shape)}`).join(", ");
        throw new Error(
          `DistributedDataParallel: ${unused.length} parameter(s) received no gradient in this backward pass: ${listed}. ` +
            "Either make every parameter contribute to the loss (check that forward's outputs all reach it), or construct DDP with " +
            "{ findUnusedParameters: true } so that these are reduced as zeros. Other ranks will report a timed-out all-reduce.",
        );
      }
      for (const i of unused) {
        this.takeGradient(i);
        this.ready[i] = 1;
        this.locate[i].bucket.pending--;
      }
      if (this.deferred) this.reduceAllNow();
      else {
        this.launchReadyBuckets();
        for (const complete of this.completions) complete!();
      }
      if (this.flat) this.writeBack();
    } finally {
      this.resetIteration();
      if (traceStart !== 0) traceSpan(TID_TRAIN, "DDP finalize (wait for bucket reductions)", traceStart);
    }
  }

  private writeBack(): void {
    noGrad(() => {
      this.params.forEach((p, i) => {
        const { bucket, slot } = this.locate[i];
        const view = bucket.gradView(slot);
        if (this.options.gradientAsBucketView) p.grad = view;
        else if (p.grad && p.grad.isContiguous()) p.grad.copy_(view);
        else p.grad = view.clone();
      });
    });
  }

  /**
   * A joined rank's stand-in for one backward of the ranks still training: it reduces zeros
   * through every bucket in order, as the same collectives the training ranks call (one per
   * bucket, or one for all when deferred), so that theirs find a partner (join()).
   */
  shadowBackward(): void {
    this.resetIteration();
    const zeroed = (bucket: Bucket) => {
      noGrad(() => bucket.buffer.zero_());
      return this.flat ? [bucket.buffer] : bucket.params.map((_, slot) => bucket.gradView(slot));
    };
    if (this.deferred) this.comm.allReduceAverage(this.buckets.flatMap(zeroed), this.divisor);
    else {
      for (const bucket of this.buckets) this.completions[bucket.index] = this.reduce(bucket, zeroed(bucket));
      for (const complete of this.completions) complete!();
    }
    this.resetIteration();
  }
}
