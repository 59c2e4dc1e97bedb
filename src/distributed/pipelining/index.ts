/** torch.distributed.pipelining: a Sequential split into stages over ranks, run over micro-batches. */
export { pipeline, Pipe, type PipelineOptions } from "./split.js";
export { PipelineStage, type PipelineStageOptions } from "./stage.js";
export { PipelineScheduleBase, PipelineSchedule, ScheduleGPipe, Schedule1F1B, type ScheduleOptions, type StepOptions, type StepTimeline, type TimedAction } from "./schedule.js";
export { ScheduleInterleaved1F1B } from "./schedule_interleaved.js";
export { type Action, type OrderFn, gpipeOrder, oneFOneBOrder, interleavedOneFOneBOrder, idealBubbleFraction, peakInFlight } from "./schedule_orders.js";
export { balanceByTime, balanceCost, type Balance, type BalanceByTimeOptions } from "./balance.js";
