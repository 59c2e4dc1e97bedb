import type { GradFn, Tensor } from "../tensor/tensor.js";

/**
 * Computes the gradients of a node's inputs from the gradient of its output. `ctx` is what the op
 * handed to record() with it (undefined when none).
 *
 * An op whose backward runs every step should be a function defined once, at module level, that
 * reads what it needs from `ctx`, rather than a closure made at each call: V8 keeps a closure's
 * optimized code only while a closure that has run it is alive. Backward closures are made in
 * forward and run once in backward, so at a full collection (the arena asks for one every few
 * dozen steps) none that has run is alive: the code is dropped, and each such closure runs
 * unoptimized again until V8 compiles it again, on a background thread.
 */
export type BackwardFn<C = unknown> = (grad: Tensor, ctx: C) => readonly (Tensor | null)[];
/** A hook on a gradient; if it returns a Tensor, that tensor replaces the gradient. */
export type TensorHook = (grad: Tensor) => unknown;
export type PostAccumulateGradHook = (param: Tensor) => void;

let nextSequenceNr = 0;

interface SavedTensor {
  tensor: Tensor;
  version: number;
}

/**
 * One recorded op. `next[i]` is the node that receives the gradient of input i (null where that
 * input needs none). Every op has one output, so the gradient arriving here is a single tensor.
 */
export class Node implements GradFn {
  readonly name: string;
  readonly next: readonly (Node | null)[];
  /** Creation order: the engine runs later nodes first, as PyTorch does. */
  readonly sequenceNr: number;
  /** Hooks on the output tensor's gradient (registerHook on a non-leaf, retainGrad). */
  readonly preHooks: TensorHook[] = [];
  private backwardFn: BackwardFn<never> | null;
  /** What backwardFn reads (BackwardFn), or undefined. */
  private ctx: unknown;
  private saved: SavedTensor[];

  constructor(name: string, next: readonly (Node | null)[], backwardFn: BackwardFn<never> | null, saved: readonly Tensor[], ctx?: unknown) {
    this.name = name;
    this.next = next;
    this.backwardFn = backwardFn;
    this.ctx = ctx;
    const kept: SavedTensor[] = [];
    for (const tensor of saved) kept.push({ tensor, version: tensor.storage.version });
    this.saved = kept;
    this.sequenceNr = nextSequenceNr++;
  }

  get priority(): number {
    return this.sequenceNr;
  }

  apply(grad: Tensor): readonly (Tensor | null)[] {
    if (!this.backwardFn) {
      throw new Error(
        `${this.name}: trying to backward through the graph a second time (or to use saved tensors after they were freed). ` +
          "Pass { retainGraph: true } to the first backward() if you need to backward through it again.",
      );
    }
    for (const s of this.saved) {
      if (s.tensor.storage.version !== s.version) {
        throw new Error(
          `${this.name}: one of the tensors it saved for the gradient (${s.tensor.describe()}) was modified by an in-place op ` +
            `after it was saved (version ${s.version} → ${s.tensor.storage.version}). Use an out-of-place op instead.`,
        );
      }
    }
    return (this.backwardFn as BackwardFn)(grad, this.ctx);
  }

  /** Drops the backward function and its ctx, and with them every tensor they held. */
  release(): void {
    this.backwardFn = null;
    this.ctx = undefined;
    this.saved = [];
  }
}

/**
 * The sink of a leaf tensor: adds the arriving gradient to `.grad`, then fires the leaf's
 * post-accumulate-grad hooks. It runs as soon as its gradient is final (highest priority), so
 * the hooks fire during backward in the order gradients become ready — DDP starts its bucket
 * all-reduces from them.
 */
export class AccumulateGrad extends Node {
  readonly variable: Tensor;
  readonly postHooks: PostAccumulateGradHook[] = [];

  constructor(variable: Tensor) {
    super("AccumulateGrad", [], null, []);
    this.variable = variable;
  }

  override get priority(): number {
    return Number.POSITIVE_INFINITY;
  }

  override release(): void {}
}
