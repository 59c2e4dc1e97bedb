// node bin/ringrun.js --standalone --nproc-per-node 2 bench/workers/pipeline_p2p.ts
//
// The comm worker's CPU per transfer, as a pipeline's boundary uses it: rank 0 sends a 32 × 512
// float32 activation (64 KiB, BYTES to change it), rank 1 sends back a gradient of the same size,
// each receive posted ahead, ITERS round trips after WARMUP. Prints per transfer (a send or a
// receive on one rank) the comm worker's CPU and the main thread's, and the round trip's wall time
// (Linux schedstat for the comm worker: the threads initProcessGroup started). With no compute
// between messages this is the messages' own cost, the part of the pipeline's idle table that
// the "comm worker CPU" column shows at m = 8.
import { readdirSync, readFileSync } from "node:fs";
import * as rt from "../../src/index.js";

const { dist } = rt;
const ITERS = Number(process.env.ITERS ?? 2000);
const WARMUP = Number(process.env.WARMUP ?? 300);
const NUMEL = Number(process.env.BYTES ?? 32 * 512 * 4) / 4;

const taskIds = (): string[] => readdirSync("/proc/self/task");
const cpuMsOf = (tids: Iterable<string>) => [...tids].reduce((s, t) => s + Number(readFileSync(`/proc/self/task/${t}/schedstat`, "utf8").split(" ")[0]) / 1e6, 0);

const before = new Set(taskIds());
await dist.initProcessGroup();
const commTids = taskIds().filter((t) => !before.has(t));
const rank = dist.getRank();
// For `perf record -t`: the comm worker's threads.
console.log(`rank ${rank} pid ${process.pid} comm worker threads ${commTids.join(",")}`);
const peer = 1 - rank;
const out = rt.randn([NUMEL]);
const inbox = rt.empty([NUMEL]);

// Each rank sends after it has what the other sent, as 1F1B's steady state does.
const roundTrip = () => {
  const r = dist.irecv(inbox, peer, { tag: rank === 0 ? 2 : 1 });
  if (rank === 0) {
    dist.isend(out, peer, { tag: 1 }).wait();
    r.wait();
  } else {
    r.wait();
    dist.isend(out, peer, { tag: 2 }).wait();
  }
};
for (let i = 0; i < WARMUP; i++) roundTrip();
dist.barrier();
const comm0 = cpuMsOf(commTids);
const main0 = cpuMsOf([String(process.pid)]);
const t0 = performance.now();
for (let i = 0; i < ITERS; i++) roundTrip();
const wallMs = performance.now() - t0;
const transfers = 2 * ITERS;
const result = {
  rank,
  bytes: NUMEL * 4,
  commCpuUsPerTransfer: ((cpuMsOf(commTids) - comm0) * 1000) / transfers,
  mainCpuUsPerTransfer: ((cpuMsOf([String(process.pid)]) - main0) * 1000) / transfers,
  roundTripUs: (wallMs * 1000) / ITERS,
};
console.log("RESULT " + JSON.stringify(result));
await dist.destroyProcessGroup();
