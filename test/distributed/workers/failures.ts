// One rank of a failure scenario (test/distributed/failures.test.ts). SCENARIO picks it; the rank
// prints RESULT {error} with the message of the error it caught (null if none).
import * as dist from "../../../src/distributed/index.js";

const scenario = process.env.SCENARIO!;
const timeoutMs = Number(process.env.OP_TIMEOUT_MS ?? 20_000);
await dist.initProcessGroup({ timeoutMs: 30_000 });
const rank = dist.getRank();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const floats = (n: number, v = 1) => new Float32Array(new SharedArrayBuffer(4 * n)).fill(v);
let error: string | null = null;
const capture = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    error = (err as Error).message;
  }
};

switch (scenario) {
  case "never_calls":
    // Rank 1 computes instead of joining the collective; the others time out and say who is missing.
    if (rank === 1) await sleep(timeoutMs + 3000);
    else capture(() => dist.allReduce(floats(1000), { timeoutMs }));
    break;
  case "dies_mid_collective":
    // Rank 0 must already be inside the collective when rank 1 dies a moment into its own part:
    // a 64 MB all-reduce can finish in well under 50 ms, so dying "later" could miss it.
    if (rank === 1) {
      await sleep(300);
      dist.allReduce(floats(16 << 20), { async: true });
      await sleep(2);
      process.kill(process.pid, "SIGKILL");
    }
    capture(() => dist.allReduce(floats(16 << 20), { timeoutMs }));
    break;
  case "sizes_differ":
    // With RINGTORCH_DISTRIBUTED_DEBUG=DETAIL every rank reports the first rank that differs, and
    // the group stays usable; without it the transfer headers catch the difference.
    capture(() => dist.allReduce(floats(rank === 1 ? 5 : 4), { timeoutMs }));
    if (process.env.RINGTORCH_DISTRIBUTED_DEBUG === "DETAIL") {
      const x = floats(3, rank);
      dist.allReduce(x, { timeoutMs });
      if (x[0] !== ((dist.getWorldSize() - 1) * dist.getWorldSize()) / 2) error = `group unusable after the check: ${x[0]}`;
    }
    break;
  case "different_collectives":
    capture(() => (rank === 0 ? dist.allReduce(floats(4), { timeoutMs }) : dist.broadcast(floats(4), 0, { timeoutMs })));
    break;
  case "uncaught":
    // Nothing catches the error: the process must still exit, with the message on stderr.
    if (rank === 1) await sleep(timeoutMs + 2000);
    else dist.allReduce(floats(10), { timeoutMs });
    break;
  default:
    throw new Error(`unknown scenario ${scenario}`);
}
console.log(`RESULT ${JSON.stringify({ error })}`);
if (error === null) await dist.destroyProcessGroup();
