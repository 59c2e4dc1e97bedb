import { Sequential } from "../../nn/containers.js";
import type { Module } from "../../nn/module.js";
import { checkOptions } from "../../util/options.js";
import type { ProcessGroup } from "../process_group.js";
import { PipelineStage, type PipelineStageOptions } from "./stage.js";

export interface PipelineOptions {
  /**
   * Names of the model's children where a new stage begins (torch's SplitPoint.BEGINNING), in
   * order: ["4"] splits a Sequential of 8 layers into layers 0-3 and 4-7.
   */
  splitPoints: readonly string[];
}

/**
 * A Sequential split into stages (torch.distributed.pipelining.pipeline's Pipe). Each stage is a
 * Sequential holding the original children under their original names, sharing their parameters,
 * so a stage's state dict keys are the full model's (`4.weight`).
 */
export class Pipe {
  constructor(readonly stages: readonly Sequential[]) {}

  get numStages(): number {
    return this.stages.length;
  }

  /** The submodule of stage `stageIndex` (torch: pipe.get_stage_module). */
  getStageModule(stageIndex: number): Sequential {
    const m = this.stages[stageIndex];
    if (m === undefined) throw new RangeError(`Pipe.getStageModule: stage ${stageIndex} does not exist; the pipe has stages 0..${this.stages.length - 1}`);
    return m;
  }

  /** A PipelineStage of this rank (torch: pipe.build_stage); stage s runs on rank s mod (size of `group`). */
  buildStage(stageIndex: number, opts?: PipelineStageOptions & { group?: ProcessGroup }): PipelineStage {
    return new PipelineStage(this.getStageModule(stageIndex), stageIndex, this.numStages, opts);
  }
}

/** Splits a Sequential at the named children (torch.distributed.pipelining.pipeline, for Sequential-like models). */
export function pipeline(model: Module, opts: PipelineOptions): Pipe {
  checkOptions("pipeline", opts, ["splitPoints"]);
  if (!(model instanceof Sequential)) {
    throw new TypeError(`pipeline: the model must be an nn.Sequential (its forward runs its children in order), got ${model?.constructor?.name ?? typeof model}`);
  }
  const names = [...model.namedChildren()].map(([n]) => n);
  const points = opts?.splitPoints;
  if (!Array.isArray(points)) throw new TypeError("pipeline: splitPoints must be an array of child names, e.g. { splitPoints: [\"4\"] }");
  const starts = points.map((p) => {
    const at = names.indexOf(String(p));
    if (at < 0) throw new Error(`pipeline: split point ${JSON.stringify(p)} is not a child of the model; its children are ${names.join(", ")}`);
    if (at === 0) throw new Error(`pipeline: split point ${JSON.stringify(p)} is the model's first child; a stage would be empty`);
    return at;
  });
  starts.forEach((s, i) => {
    if (i > 0 && s <= starts[i - 1]!) throw new Error(`pipeline: split points must name children in the model's order without repeats, got ${points.join(", ")}`);
  });
  const bounds = [0, ...starts, names.length];
  const children = new Map(model.namedChildren());
  const stages = bounds.slice(0, -1).map((from, i) => {
    const members: Record<string, Module> = {};
    for (const name of names.slice(from, bounds[i + 1])) members[name] = children.get(name)!;
    return new Sequential(members);
  });
  return new Pipe(stages);
}
