import { Tensor } from "../tensor/tensor.js";
import { formatShape, shapesEqual } from "../tensor/shape.js";
import { add, addInPlace } from "../ops/elementwise.js";
import { clone, onesLike } from "../ops/creation.js";
import { isGradEnabled, setGradEnabled } from "./grad_mode.js";
import { AccumulateGrad, type Node } from "./node.js";
import { gradEdge } from "./record.js";
import { returnHeap, takeHeap } from "./heap.js";
import { TID_TRAIN, traceNow, traceSpan, tracing } from "../util/trace.js";

export interface BackwardOptions {
  /** Keep the graph's saved tensors so that backward can run through it again. */
  retainGraph?: boolean;
  /** Record the backward computation itself, for higher-order gradients. */
  createGraph?: boolean;
}

let finalCallbacks: (() => void)[] | null = null;

/**
 * Leaf gradients left for later by the pass now running (BackwardOptions' internal
 * deferredLeafGradients); null outside such a pass and inside any pass nested in it.
 */
let deferred: (() => void)[] | null = null;

/**
 * For an op's backward: when the pass running it defers leaf gradients (a pipeline stage that sends
 * its input's gradient before it computes its weights' gradients, the "B then W" split of
 * zero-bubble pipelines), queues `compute` — the gradients of `leaves` (weights, biases; null
 * where none) — to run after the pass and returns true, so the op returns null for them now.
 * Returns false, and the op computes them as usual, when the pass does not defer, a "leaf" is not
 * one (its gradient would flow on into the graph), or a leaf has hooks. `compute` makes new
 * tensors (no view of the op's incoming gradient), as an op's backward results are.
 */
export function deferLeafGradients(leaves: readonly (Tensor | null | undefined)[], compute: () => readonly (Tensor | null)[]): boolean {
  if (deferred === null) return false;
  for (const t of leaves) {
    if (!t) continue;
    if (t.gradFn || !t.requiresGrad) return false;
    // A leaf with hooks (DDP's and FSDP's gradient hooks) gets its gradient inside the pass, where they expect it.
    const node = gradEdge(t) as AccumulateGrad;
    if (node.preHooks.length > 0 || node.postHooks.length > 0) return false;
  }
  deferred.push(() => {
    const grads = compute();
    for (let i = 0; i < leaves.length; i++) {
      const leaf = leaves[i];
      const g = grads[i];
      if (leaf && g) accumulateLeaf(gradEdge(leaf) as AccumulateGrad, g, grads);
    }
  });
  return true;
}

/**
 * Runs the leaf gradients a pass deferred (runBackward's deferredLeafGradients), in the order
 * their ops ran, outside grad mode as the pass would have, each accumulated into its leaf's .grad.
 */
export function runDeferredLeafGradients(list: (() => void)[]): void {
  const previousGradMode = isGradEnabled();
  setGradEnabled(false);
  try {
    for (let i = 0; i < list.length; i++) list[i]!();
  } finally {
    list.length = 0;
    setGradEnabled(previousGradMode);
  }
}

/**
 * Runs fn once the backward pass now in progress has finished every node (torch's
 * Variable._execution_engine.queue_callback). DDP waits for its bucket all-reduces here, so that
 * backward() returns with averaged gradients. Only callable during backward.
 */
export function queueCallback(fn: () => void): void {
  if (!finalCallbacks) throw new Error("queueCallback: can only be called while a backward pass is running (from a hook)");
  finalCallbacks.push(fn);
}

interface Pending {
  grad: Tensor;
  /** The engine made this tensor and nothing else holds it: a leaf may adopt it as its .grad. */
  owned: boolean;
}

/**
 * Runs the backward pass from `roots`. With `capture`, gradients arriving at those nodes are
 * returned instead of accumulated into any leaf's .grad (autograd.grad); without it, leaves
 * accumulate into .grad and fire their post-accumulate-grad hooks as each becomes final.
 */
export function runBackward(
  roots: readonly Tensor[],
  rootGrads: readonly (Tensor | null | undefined)[],
  options: BackwardOptions & {
    capture?: readonly Node[];
    /**
     * Internal, opt-in (the pipeline schedules): ops whose backward supports it (linear) leave
     * their leaf gradients in this list for the caller to run with runDeferredLeafGradients, so
     * that the gradients flowing back to the graph's inputs are final sooner. Ignored with
     * createGraph or capture; if a hook queues a final callback (DDP, FSDP), the deferred
     * gradients run before it, since callbacks expect every gradient.
     */
    deferredLeafGradients?: (() => void)[];
  } = {},
): Map<Node, Tensor> {
  const traceStart = tracing.on ? traceNow() : 0;
  const createGraph = options.createGraph ?? false;
  const retainGraph = options.retainGraph ?? createGraph;
  const capture = new Set(options.capture ?? []);
  const captured = new Map<Node, Tensor>();

  const pending = new Map<Node, Pending | null>();
  const rootNodes: Node[] = [];
  for (let i = 0; i < roots.length; i++) {
    const root = roots[i]!;
    const node = gradEdge(root);
    if (!node) {
      throw new Error(`backward: element ${i} of the outputs (${root.describe()}) does not require grad and has no gradFn`);
    }
    let g = rootGrads[i] ?? null;
    if (!g) {
      if (root.numel !== 1) {
        throw new Error(`backward: a gradient can be created implicitly only for scalar outputs, but the output has shape ${formatShape(root.shape)}; pass a gradient of that shape`);
      }
      g = onesLike(root);
    } else if (!shapesEqual(g.shape, root.shape)) {
      throw new Error(`backward: the gradient has shape ${formatShape(g.shape)} but the output has shape ${formatShape(root.shape)}`);
    }
    addPending(pending, node, g, false);
    rootNodes.push(node);
  }

  const dependencies = countDependencies(rootNodes);
  const ready = takeHeap<Node>();
  for (const node of new Set(rootNodes)) if ((dependencies.get(node) ?? 0) === 0) ready.push(node);

  const previousGradMode = isGradEnabled();
  const outerCallbacks = finalCallbacks;
  const callbacks: (() => void)[] = [];
  finalCallbacks = callbacks;
  const outerDeferred = deferred;
  const deferring = !createGraph && capture.size === 0 ? (options.deferredLeafGradients ?? null) : null;
  deferred = deferring;
  setGradEnabled(createGraph);
  try {
    while (ready.size > 0) {
      const node = ready.pop()!;
      const entry = pending.get(node) ?? null;
      pending.delete(node);
      let grad = entry?.grad ?? null;
      let owned = entry?.owned ?? false;
      if (grad) {
        for (const hook of node.preHooks) {
          const replaced = hook(grad);
          if (replaced instanceof Tensor) {
            grad = replaced;
            owned = false;
          }
        }
      }
      if (capture.has(node) && grad) captured.set(node, grad);

      if (node instanceof AccumulateGrad) {
        if (grad && capture.size === 0) accumulate(node, grad, owned, createGraph);
        continue;
      }

      const deferredBefore = deferring?.length ?? 0;
      const results = grad ? node.apply(grad) : null;
      if (!retainGraph) node.release();
      if (owned && !createGraph && results && node.preHooks.length === 0 && !capture.has(node)) {
        // A node that deferred its leaf gradients reads its incoming gradient later: release it after them.
        if (deferring !== null && deferring.length !== deferredBefore) deferring.push(() => releaseIfDead(grad!, results));
        else releaseIfDead(grad!, results);
      }
      // A plain loop, not forEach with a closure made per node: such a closure's optimized code is
      // dropped at any full collection that finds none alive (see BackwardFn in node.ts).
      const next = node.next;
      for (let i = 0; i < next.length; i++) {
        const nextNode = next[i];
        if (!nextNode) continue;
        const r = results?.[i] ?? null;
        if (r) addPending(pending, nextNode, r, isExclusive(r, grad!, results!));
        const left = dependencies.get(nextNode)! - 1;
        dependencies.set(nextNode, left);
        if (left === 0) ready.push(nextNode);
      }
    }
    deferred = outerDeferred;
    if (deferring && callbacks.length > 0) runDeferredLeafGradients(deferring);
    // Callbacks may queue more callbacks; run until none are left.
    for (let i = 0; i < callbacks.length; i++) callbacks[i]();
  } finally {
    returnHeap(ready);
    deferred = outerDeferred;
    finalCallbacks = outerCallbacks;
    setGradEnabled(previousGradMode);
    if (traceStart !== 0) traceSpan(TID_TRAIN, capture.size > 0 ? "autograd.grad" : "backward", traceStart);
  }
  return captured;
}

function addPending(pending: Map<Node, Pending | null>, node: Node, grad: Tensor, owned: boolean): void {
  const existing = pending.get(node);
  if (!existing) {
    pending.set(node, { grad, owned });
    return;
  }
  if (!shapesEqual(existing.grad.shape, grad.shape)) {
    throw new Error(`${node.name}: gradients of shapes ${formatShape(existing.grad.shape)} and ${formatShape(grad.shape)} arrived for the same tensor`);
  }
  // A sum the engine already owns (and that is not itself being differentiated) grows in place.
  if (existing.owned && !isGradEnabled() && existing.grad.dtype === grad.dtype) addInPlace(existing.grad, grad);
  else pending.set(node, { grad: add(existing.grad, grad), owned: true });
}

/** Nodes reachable from the roots, each with the number of edges that lead into it. */
function countDependencies(roots: readonly Node[]): Map<Node, number> {
  const deps = new Map<Node, number>();
  const seen = new Set<Node>();
  const stack = [...new Set(roots)];
  for (const r of stack) seen.add(r);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!deps.has(node)) deps.set(node, 0);
    for (const next of node.next) {
      if (!next) continue;
      deps.set(next, (deps.get(next) ?? 0) + 1);
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return deps;
}

/**
 * Returns an engine-owned gradient's memory to the pool once its node has consumed it, unless a
 * result still shares that memory (a view of it flows on). Backward is where most temporaries of a
 * training step are made; recycling them spares the page faults of fresh buffers every step.
 */
function releaseIfDead(grad: Tensor, results: readonly (Tensor | null)[]): void {
  for (const r of results) if (r && r.storage === grad.storage) return;
  grad.storage.release();
}

/** A gradient the engine may hand to a leaf as its .grad without copying it. */
function isExclusive(r: Tensor, incoming: Tensor, results: readonly (Tensor | null)[]): boolean {
  if (r === incoming || r.storage === incoming.storage || r.gradFn) return false;
  if (r.offset !== 0 || r.numel !== r.storage.length || !r.isContiguous()) return false;
  let uses = 0;
  for (const other of results) if (other && other.storage === r.storage) uses++;
  return uses === 1;
}

/** A deferred leaf gradient (its leaf has no hooks: deferLeafGradients) goes into .grad as the pass would have put it. */
function accumulateLeaf(node: AccumulateGrad, g: Tensor, siblings: readonly (Tensor | null)[]): void {
  // compute() makes its gradients (deferLeafGradients): one that is dense and alone on its memory may become .grad.
  const owned = !g.gradFn && g.offset === 0 && g.numel === g.storage.length && g.isContiguous() && siblings.every((o) => o === g || !o || o.storage !== g.storage);
  accumulate(node, g, owned, false);
}

function accumulate(node: AccumulateGrad, grad: Tensor, owned: boolean, createGraph: boolean): void {
  const v = node.variable;
  if (!shapesEqual(grad.shape, v.shape)) {
    throw new Error(`backward: the gradient for a leaf of shape ${formatShape(v.shape)} has shape ${formatShape(grad.shape)}`);
  }
  if (v.grad === null) {
    v.grad = owned && !createGraph && grad.dtype === v.dtype ? grad : createGraph ? grad : clone(grad).detach();
  } else if (createGraph || v.grad.requiresGrad) {
    v.grad = add(v.grad, grad);
  } else {
    addInPlace(v.grad, grad);
  }
  for (const hook of node.postHooks) hook(v);
}
