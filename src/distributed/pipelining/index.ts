/** torch.distributed.pipelining: a Sequential split into stages, one per rank, run over micro-batches. */
export { pipeline, Pipe, type PipelineOptions } from "./split.js";
export { PipelineStage, type PipelineStageOptions } from "./stage.js";
export { PipelineSchedule, ScheduleGPipe, Schedule1F1B, type ScheduleOptions, type StepOptions, type StepTimeline } from "./schedule.js";
export { type Action, gpipeOrder, oneFOneBOrder, idealBubbleFraction, peakInFlight } from "./schedule_orders.js";
