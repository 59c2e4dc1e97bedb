import { commTraceTag, TID_TRAIN, traceNow, traceSpan, tracing, type PipelineMessage, type TraceArgs } from "../../util/trace.js";

/**
 * The pipeline's part of the timeline (README "Timeline"): on the training thread a span per
 * forward and backward of a micro-batch, and per wait for a peer's message (the bubble); on the
 * comm thread each send and receive is named for what it carries, with its micro-batch.
 */

/** Runs `post` (an isend or irecv) with the comm span tagged as carrying `what` of micro-batch `mb` across `boundary`. */
export function tagged<T>(what: PipelineMessage, mb: number, boundary: number, post: () => T): T {
  if (!tracing.on || mb < 0) return post();
  commTraceTag.current = { pipeline: { what, mb, boundary } };
  try {
    return post();
  } finally {
    commTraceTag.current = null;
  }
}

/** Runs `fn` as a span on the training thread (only a flag check when not tracing). */
export function spanned<T>(name: string, args: TraceArgs, fn: () => T): T {
  if (!tracing.on) return fn();
  const t0 = traceNow();
  try {
    return fn();
  } finally {
    traceSpan(TID_TRAIN, name, t0, args);
  }
}
