import { inferenceState } from "../tensor/storage.js";
import { runThenRestore } from "../util/scoped.js";
/** Whether ops record the graph. Off inside noGrad() and while backward runs (unless createGraph). */
let enabled = true;

export function isGradEnabled(): boolean {
  return enabled;
}

export function setGradEnabled(value: boolean): void {
  enabled = value;
}

/**
 * Runs fn without recording autograd graphs (torch.no_grad). An async fn keeps grad mode off
 * until its promise settles; JavaScript has no thread-local state, so do not interleave it with
 * other work that needs grad mode on.
 */
export function noGrad<T>(fn: () => T): T {
  return withGradMode(false, fn);
}

let inference = false;

/**
 * Runs fn in inference mode (torch.inference_mode): no graph is recorded, as in noGrad, and
 * isInferenceModeEnabled() is true inside. `inferenceMode(false, fn)` runs fn with the mode off.
 * As in PyTorch, tensors whose memory is allocated inside are inference tensors (`isInference()`):
 * outside inferenceMode they cannot be saved for backward, updated in place, or made to require
 * grad; `clone()` one to get a normal tensor. Views of normal tensors stay normal.
 */
export function inferenceMode<T>(fn: () => T): T;
export function inferenceMode<T>(mode: boolean, fn: () => T): T;
export function inferenceMode<T>(modeOrFn: boolean | (() => T), maybeFn?: () => T): T {
  const mode = typeof modeOrFn === "boolean" ? modeOrFn : true;
  const fn = typeof modeOrFn === "function" ? modeOrFn : maybeFn;
  if (typeof fn !== "function") throw new TypeError("inferenceMode: expected a function to run, as inferenceMode(() => model.call(x))");
  if (!mode) return fn();
  const previous = inference;
  inference = inferenceState.active = true;
  const restore = () => (inference = inferenceState.active = previous);
  return runThenRestore(() => withGradMode(false, fn), restore);
}

export function isInferenceModeEnabled(): boolean {
  return inference;
}

export function enableGrad<T>(fn: () => T): T {
  return withGradMode(true, fn);
}

function withGradMode<T>(value: boolean, fn: () => T): T {
  const previous = enabled;
  enabled = value;
  return runThenRestore(fn, () => {
    enabled = previous;
  });
}
