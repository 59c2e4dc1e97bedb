import { bytesToString } from "../../distributed/store/store.js";
import type { TraceGroupContext } from "../../util/trace.js";

export interface ClockOffset {
  /** Add to this rank's clock to read rank 0's (µs). */
  offsetUs: number;
  /** Round trip of the sample the offset comes from (µs): the offset is good to about half of it. */
  rttUs: number;
}

/** Round trips per rank: the fastest one is kept, as NTP does. */
const SAMPLES = 16;
/** A rank that never answers (it does not trace) costs at most this long. */
const TIMEOUT_MS = 10_000;

/**
 * Measures each rank's clock against rank 0's through the job's store, NTP-style. For each
 * sample, rank r asks for rank 0's answer, then posts a ping and notes its own times t1 (before
 * the ping) and t4 (answer received); rank 0 answers each ping at once with its clock t0. Taking
 * t0 as read at the midpoint of the round trip gives offset = t0 − (t1 + t4) / 2, wrong by at
 * most half the round trip (and only by its asymmetry in practice). Of all samples, the one with
 * the shortest round trip is kept: it is the one least delayed by a busy scheduler. Every rank
 * of the group must call it (initProcessGroup does, while tracing); rank 0 serves all at once.
 */
export async function alignClock(ctx: TraceGroupContext, now: () => number, samples = SAMPLES): Promise<ClockOffset> {
  const store = ctx.store;
  if (ctx.worldSize <= 1 || store === null) return { offsetUs: 0, rttUs: 0 };
  const key = (rank: number, i: number, what: "ping" | "pong") => `${ctx.prefix}/trace/clock/${rank}/${i}/${what}`;
  if (ctx.rank === 0) {
    const serve = async (rank: number) => {
      for (let i = 0; i < samples; i++) {
        await store.get(key(rank, i, "ping"), TIMEOUT_MS);
        await store.set(key(rank, i, "pong"), String(now()));
      }
    };
    const results = await Promise.allSettled(Array.from({ length: ctx.worldSize - 1 }, (_, r) => serve(r + 1)));
    const failed = results.map((r, i) => (r.status === "rejected" ? i + 1 : -1)).filter((r) => r >= 0);
    if (failed.length > 0) {
      console.warn(`ringtorch trace: rank(s) ${failed.join(", ")} did not align their clocks with rank 0 within ${TIMEOUT_MS} ms (is RINGTORCH_TRACE set on every rank?); their times may be off`);
    }
    return { offsetUs: 0, rttUs: 0 };
  }
  let best: ClockOffset = { offsetUs: 0, rttUs: Infinity };
  for (let i = 0; i < samples; i++) {
    // Asked before the ping is posted, so the answer comes back the moment rank 0 writes it.
    const answer = store.get(key(ctx.rank, i, "pong"), TIMEOUT_MS);
    answer.catch(() => {});
    const t1 = now();
    await store.set(key(ctx.rank, i, "ping"), "1");
    const t0 = Number(bytesToString(await answer));
    const t4 = now();
    if (t4 - t1 < best.rttUs) best = { offsetUs: t0 - (t1 + t4) / 2, rttUs: t4 - t1 };
  }
  return best;
}
