import { performance } from "node:perf_hooks";
import { runBackward } from "../../autograd/engine.js";
import { noGrad } from "../../autograd/grad_mode.js";
import { Sequential } from "../../nn/containers.js";
import type { Module } from "../../nn/module.js";
import { clone, onesLike, tensor } from "../../ops/creation.js";
import { getRngState, setRngState } from "../../tensor/random.js";
import { Tensor } from "../../tensor/tensor.js";
import { checkOptions } from "../../util/options.js";
import { broadcast } from "../collectives.js";
import type { ProcessGroup } from "../process_group.js";

export interface BalanceByTimeOptions {
  /** How many stages to cut the model into (at least 1, at most its number of children). */
  stages: number;
  /**
   * The loss on the last child's output and `target` (the last stage computes it, so its cost is
   * the last stage's): give both or neither.
   */
  lossFn?: (output: Tensor, target: Tensor) => Tensor;
  target?: Tensor;
  /** Rounds of timing; each child's time is the least over them (default 5). */
  rounds?: number;
  /** Forward + backward runs of each child per round (default 3). */
  repeats?: number;
  /**
   * "cpu" (default): the process's CPU time, which other jobs on a shared machine do not inflate
   * the way they inflate wall time (and which counts intra-op threads' work); "wall": elapsed time.
   */
  clock?: "cpu" | "wall";
  /**
   * Every rank of this group times the model and all of them take group rank 0's times, so that
   * they agree on the split (ranks timed apart can disagree where two splits cost about the same,
   * and disagreeing stages cannot run). Without it the result is this process's alone.
   */
  group?: ProcessGroup;
}

export interface Balance {
  /** Where each stage after the first begins: pipeline(model, { splitPoints }). */
  splitPoints: string[];
  /** Children per stage (torchgpipe's balance). */
  sizes: number[];
  /** Each child's forward + backward time on the sample, ms (the least over the rounds; the loss in the last child's). */
  childMs: number[];
  /** Each stage's time, ms: the sum of its children's. */
  stageMs: number[];
}

/**
 * Split points that balance the stages by measured time (torchgpipe's balance_by_time, for
 * torch.distributed.pipelining's split points): each child of the Sequential runs forward and
 * backward on the activations `sample` (one micro-batch) produces at its input, and the model is
 * cut into `opts.stages` contiguous stages whose slowest is fastest (balanceCost). A child's input
 * needs its gradient except the first child's, as in a pipeline where only the first stage's input
 * needs none. The parameters' .grad, the buffers and the random generator's state are left as they
 * were (the model runs in the mode it is in: train() for a training step's cost). Costs add up per child, so what a stage
 * does at its boundary (copying messages) is not in them.
 */
export function balanceByTime(model: Module, sample: Tensor, opts: BalanceByTimeOptions): Balance {
  checkOptions("balanceByTime", opts, ["stages", "lossFn", "target", "rounds", "repeats", "clock", "group"]);
  if (!(model instanceof Sequential)) {
    throw new TypeError(`balanceByTime: the model must be an nn.Sequential (as pipeline() splits), got ${model?.constructor?.name ?? typeof model}`);
  }
  if (!(sample instanceof Tensor)) throw new TypeError("balanceByTime: sample must be a Tensor: one micro-batch of the model's input");
  const children = [...model.namedChildren()];
  const { stages, rounds = 5, repeats = 3, clock = "cpu" } = opts;
  if (!Number.isInteger(stages) || stages < 1 || stages > children.length) {
    throw new RangeError(`balanceByTime: stages must be an integer in 1..${children.length} (the model's children), got ${stages}`);
  }
  for (const [name, v] of [["rounds", rounds], ["repeats", repeats]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`balanceByTime: ${name} must be a positive integer, got ${v}`);
  }
  if (clock !== "cpu" && clock !== "wall") throw new TypeError(`balanceByTime: clock must be "cpu" or "wall", got ${JSON.stringify(clock)}`);
  if ((opts.lossFn === undefined) !== (opts.target === undefined)) throw new Error("balanceByTime: give lossFn and target together (the last stage's loss), or neither");
  if (opts.lossFn !== undefined && typeof opts.lossFn !== "function") throw new TypeError("balanceByTime: lossFn must be a function (output, target) => scalar loss");

  // Timing must leave no trace on the model or the run: gradients are set aside (off while timing,
  // so that the engine makes new ones instead of adding into the caller's), buffers (batch norm's
  // running statistics) and the random generator (dropout draws from it) restored.
  const grads = [...model.parameters()].map((p) => [p, p.grad] as const);
  const buffers = model.buffers().map((b) => [b, clone(b)] as const);
  const rng = getRngState();
  for (const [p] of grads) p.grad = null;
  let childMs: number[];
  try {
    childMs = timeChildren(children.map(([, c]) => c), sample, opts.lossFn, opts.target, rounds, repeats, clock);
  } finally {
    for (const [p, g] of grads) p.grad = g;
    noGrad(() => {
      for (const [b, saved] of buffers) b.copy_(saved);
    });
    setRngState(rng);
  }
  if (opts.group) {
    const t = tensor(childMs, { dtype: "float64" });
    broadcast(t, opts.group.ranks[0]!, { group: opts.group });
    childMs = Array.from(t.storage.data as Float64Array);
  }
  const sizes = balanceCost(childMs, stages);
  const splitPoints: string[] = [];
  const stageMs: number[] = [];
  let at = 0;
  for (const n of sizes) {
    if (at > 0) splitPoints.push(children[at]![0]);
    stageMs.push(childMs.slice(at, (at += n)).reduce((a, b) => a + b, 0));
  }
  return { splitPoints, sizes, childMs, stageMs };
}

/** Each child's least time over the rounds, ms; rounds go over all children in turn, so a burst of load lands on one round of each. */
function timeChildren(
  children: Module[],
  sample: Tensor,
  lossFn: BalanceByTimeOptions["lossFn"],
  target: Tensor | undefined,
  rounds: number,
  repeats: number,
  clock: "cpu" | "wall",
): number[] {
  const now = clock === "wall" ? () => performance.now() : () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  // Each child's input: what the children before it make of the sample.
  const inputs: Tensor[] = [];
  noGrad(() => {
    let h = sample;
    for (const c of children) {
      inputs.push(h);
      h = c.call(h) as Tensor;
    }
  });
  const last = children.length - 1;
  const once = (i: number) => {
    const input = i === 0 ? inputs[0]! : inputs[i]!.detach().requiresGrad_(true);
    const out = children[i]!.call(input) as Tensor;
    if (i === last && lossFn) runBackward([lossFn(out, target!)], [null]);
    else if (out.requiresGrad) runBackward([out], [onesLike(out)]);
  };
  const best = children.map(() => Infinity);
  // One untimed round: the first calls compile and size the allocator's free lists.
  for (let i = 0; i <= last; i++) once(i);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i <= last; i++) {
      const t0 = now();
      for (let k = 0; k < repeats; k++) once(i);
      best[i] = Math.min(best[i]!, (now() - t0) / repeats);
    }
  }
  return best;
}

/**
 * How many consecutive children each of `stages` stages gets so that the costliest stage costs
 * least (torchgpipe's balance_cost; exact, by dynamic programming over the prefix sums). Among
 * cuts with the same costliest stage, the first found from the left is kept.
 */
export function balanceCost(costs: readonly number[], stages: number): number[] {
  const n = costs.length;
  if (!Number.isInteger(stages) || stages < 1 || stages > n) throw new RangeError(`balanceCost: stages must be an integer in 1..${n} (one cost per child), got ${stages}`);
  if (!costs.every((c) => Number.isFinite(c) && c >= 0)) throw new RangeError("balanceCost: costs must be finite and not negative");
  const prefix = [0];
  for (const c of costs) prefix.push(prefix.at(-1)! + c);
  // worst[k][j]: the least costliest stage putting the first j children on k stages; cut[k][j]: where the k-th begins.
  const worst = Array.from({ length: stages + 1 }, () => new Array<number>(n + 1).fill(Infinity));
  const cut = Array.from({ length: stages + 1 }, () => new Array<number>(n + 1).fill(0));
  worst[0]![0] = 0;
  for (let k = 1; k <= stages; k++) {
    for (let j = k; j <= n; j++) {
      for (let i = k - 1; i < j; i++) {
        const w = Math.max(worst[k - 1]![i]!, prefix[j]! - prefix[i]!);
        if (w < worst[k]![j]!) [worst[k]![j], cut[k]![j]] = [w, i];
      }
    }
  }
  const sizes: number[] = [];
  for (let k = stages, j = n; k > 0; k--) {
    const i = cut[k]![j]!;
    sizes.unshift(j - i);
    j = i;
  }
  return sizes;
}
