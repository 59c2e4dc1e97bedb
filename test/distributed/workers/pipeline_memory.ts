// One rank of test/distributed/pipeline_memory.test.ts (2 ranks): a 2-stage pipeline run under
// GPipe and 1F1B; after every action the rank collects garbage (a full collection, whose array
// buffers V8 sweeps before it returns: src/tensor/arena.ts) and reads the tensor pool's held
// bytes. Prints RESULT { probe, gpipe, 1f1b }: probe checks the reading on tensors of known size;
// for each schedule, start is the bytes held before the step, held[i] after action i, order[i] the
// action, and madeBytes what the message buffers the stage made during the step take in the pool
// (kept for the stage's life; how many a step needs depends on timing: message_buffers.ts).
import * as rt from "../../../src/index.js";
import { exposeCollector } from "../../../src/tensor/arena.js";

const { nn, dist } = rt;
const collect = exposeCollector();
if (!collect) throw new Error("pipeline_memory: V8's gc could not be exposed");
const [D, H, O, MB, M] = [64, 256, 128, 8, 6];

await dist.initProcessGroup({ timeoutMs: 60_000 });
const rank = dist.getRank();
rt.getBackend();
const heldNow = () => {
  collect();
  return rt.memoryPool.stats()!.held;
};

// The reading itself, on tensors of known size: 4 kept, then dropped.
const before = heldNow();
let kept: rt.Tensor[] = Array.from({ length: 4 }, () => rt.randn([MB, H]));
const withKept = heldNow();
kept = [];
const probe = { keptBytes: withKept - before, afterDrop: heldNow() - before, expected: 4 * MB * H * 4 };

rt.manualSeed(0);
const model = new nn.Sequential(new nn.Linear(D, H), new nn.ReLU(), new nn.Linear(H, H), new nn.Linear(H, H), new nn.ReLU(), new nn.Linear(H, O));
const stage = dist.pipelining.pipeline(model, { splitPoints: ["3"] }).buildStage(rank);
const x = rt.randn([MB * M, D]);
const y = rt.randn([MB * M, O]);

/** The pool's bytes for one more tensor like `t` (its size class, not its byteLength). */
let twin: rt.Tensor | null = null;
const pooledBytesOf = (t: rt.Tensor): number => {
  const before = heldNow();
  twin = rt.empty(t.shape, { dtype: t.dtype });
  const after = heldNow();
  twin = null;
  return after - before;
};

const result: Record<string, unknown> = { probe };
for (const [name, Schedule] of [["gpipe", dist.pipelining.ScheduleGPipe], ["1f1b", dist.pipelining.Schedule1F1B]] as const) {
  let held: number[] = [];
  let start = 0;
  let made: rt.Tensor[] = [];
  const schedule = new Schedule(stage, {
    nMicrobatches: M,
    // A loss that saves only the output and the target (a view of y): the last stage's saved tensors stay the ones its layers save.
    lossFn: (o, t) => o.mul(t).sum(),
    lossScaling: "mean",
    afterAction: () => held.push(heldNow()),
  });
  const step = () => {
    held = [];
    start = heldNow();
    const madeBefore = stage.buffers.madeSoFar().length;
    if (rank === 0) schedule.step(x);
    else schedule.step({ target: y });
    made = stage.buffers.madeSoFar().slice(madeBefore);
  };
  // The first steps allocate the gradients (kept across steps) and the stage's message buffers.
  for (let i = 0; i < 3; i++) step();
  const madeBytes = made.reduce((n, b) => n + pooledBytesOf(b), 0);
  result[name] = { order: schedule.lastTimeline!.actions.map((a) => `${a.kind}${a.mb}`), held, start, madeBytes };
}
await dist.destroyProcessGroup();
console.log("RESULT " + JSON.stringify(result));
