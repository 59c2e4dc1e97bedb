import { checkArity } from "../../util/options.js";
import { PipelineScheduleBase, type ScheduleOptions } from "./schedule.js";
import { type Action, interleavedOneFOneBOrder, microbatchesPerRound } from "./schedule_orders.js";
import type { PipelineStage } from "./stage.js";

/**
 * Interleaved 1F1B (torch.distributed.pipelining.ScheduleInterleaved1F1B): each of p ranks holds
 * v stages of a pipeline of v·p (stage s on group rank s mod p), given here as this rank's stages.
 * Micro-batches go round the ranks v times, so the bubble is about (p-1)/(v·m + p-1) instead of
 * (p-1)/(m + p-1), for v times as many messages. The number of micro-batches must be a multiple
 * of max(1, floor(m / p)) (PyTorch's rounds).
 *
 *     const stages = [rank, rank + p].map((s) => pipe.buildStage(s));
 *     const schedule = new ScheduleInterleaved1F1B(stages, { nMicrobatches: 4, lossFn, lossScaling: "mean" });
 */
export class ScheduleInterleaved1F1B extends PipelineScheduleBase {
  private readonly stagesPerRank: number;

  constructor(stages: readonly PipelineStage[], opts: ScheduleOptions) {
    const usage = "new ScheduleInterleaved1F1B([stage, …], { nMicrobatches, lossFn, lossScaling })";
    checkArity("ScheduleInterleaved1F1B", arguments, 2, usage);
    if (!Array.isArray(stages)) throw new TypeError(`ScheduleInterleaved1F1B: expected an array of this rank's stages: ${usage}`);
    super(stages, opts, usage);
    const { group, numStages } = this.stages[0]!;
    const v = numStages / group.size;
    if (group.size < 2) throw new Error(`ScheduleInterleaved1F1B: needs a pipeline on at least 2 ranks, got a group of ${group.size}`);
    const mine = this.stages.map((st) => st.stageIndex);
    const expected = Array.from({ length: v }, (_, i) => i * group.size + group.rank);
    if (mine.length !== v || mine.some((s, i) => s !== expected[i])) {
      throw new Error(
        `ScheduleInterleaved1F1B: group rank ${group.rank} of ${group.size} must hold the stages ${expected.join(", ")} of the ${numStages}-stage pipeline (stage s on rank s mod ${group.size}), got ${mine.join(", ")}`,
      );
    }
    microbatchesPerRound(group.size, this.nMicrobatches);
    this.stagesPerRank = v;
  }

  protected orderFor(rank: number, p: number, m: number): Action[] {
    return interleavedOneFOneBOrder(rank, p, m, this.stagesPerRank);
  }
}
