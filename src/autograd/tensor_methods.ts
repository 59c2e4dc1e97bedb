import { Tensor } from "../tensor/tensor.js";
import type { BackwardOptions } from "./engine.js";
import { runBackward } from "./engine.js";
import { AccumulateGrad, type Node, type PostAccumulateGradHook, type TensorHook } from "./node.js";
import { gradEdge, metaOf } from "./record.js";
import { checkOptions } from "../util/options.js";

export interface RemovableHandle {
  remove(): void;
}

declare module "../tensor/tensor.js" {
  interface Tensor {
    /**
     * Computes the gradient of this tensor w.r.t. graph leaves: `loss.backward()` for a scalar,
     * `y.backward(gradient)` otherwise; options may come alone: `loss.backward({ retainGraph: true })`.
     */
    backward(gradient?: Tensor | BackwardOptions | null, options?: BackwardOptions): void;
    /** Calls hook with this tensor's gradient during backward; a returned tensor replaces it. */
    registerHook(hook: TensorHook): RemovableHandle;
    /** Calls hook with this leaf after its .grad has been updated during backward. */
    registerPostAccumulateGradHook(hook: PostAccumulateGradHook): RemovableHandle;
    /** Keeps .grad on a non-leaf tensor after backward. */
    retainGrad(): void;
  }
}

function removable<T>(list: T[], item: T): RemovableHandle {
  list.push(item);
  return {
    remove() {
      const i = list.indexOf(item);
      if (i >= 0) list.splice(i, 1);
    },
  };
}

function hookNode(t: Tensor, what: string): Node {
  const node = gradEdge(t);
  if (!node) throw new Error(`${what}: cannot register a hook on a tensor that does not require grad (${t.describe()})`);
  return node;
}

Tensor.prototype.backward = function (this: Tensor, gradient?: Tensor | BackwardOptions | null, options: BackwardOptions = {}): void {
  checkOptions("backward", gradient && !(gradient instanceof Tensor) ? gradient : options, ["retainGraph", "createGraph"]);
  if (gradient && !(gradient instanceof Tensor)) runBackward([this], [null], gradient);
  else runBackward([this], [gradient ?? null], options);
};

Tensor.prototype.registerHook = function (this: Tensor, hook: TensorHook): RemovableHandle {
  return removable(hookNode(this, "registerHook").preHooks, hook);
};

Tensor.prototype.registerPostAccumulateGradHook = function (this: Tensor, hook: PostAccumulateGradHook): RemovableHandle {
  const node = hookNode(this, "registerPostAccumulateGradHook");
  if (!(node instanceof AccumulateGrad)) {
    throw new Error("registerPostAccumulateGradHook: only leaf tensors have an accumulated gradient; use registerHook on a non-leaf");
  }
  return removable(node.postHooks, hook);
};

Tensor.prototype.retainGrad = function (this: Tensor): void {
  if (this.isLeaf) return;
  const meta = metaOf(this);
  if (meta.retainsGrad) return;
  meta.retainsGrad = true;
  hookNode(this, "retainGrad").preHooks.push((g: Tensor) => {
    this.grad = this.grad ? this.grad.add(g) : g.detach().clone();
  });
};
