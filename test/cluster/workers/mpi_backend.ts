// One rank of the mpi backend's collectives check (test/cluster/mpi_backend.test.ts runs it under
// mpirun). Every rank rebuilds every rank's inputs and checks its results against the one-line
// reference over all of them (test/distributed/workers/reference.ts). Prints RESULT {failures, cases, backend, transports}.
import * as dist from "../../../src/distributed/index.js";
import { combine, type DT, firstDifference, inputs, makeArray, type Op, read, value } from "../../distributed/workers/reference.js";

await dist.initProcessGroup({ backend: "mpi", timeoutMs: 60_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const ranks = Array.from({ length: world }, (_, r) => r);
const DTYPES: DT[] = ["float32", "float64", "int32", "bfloat16"];
const OPS: Op[] = ["sum", "avg", "product", "min", "max"];
const LENGTHS = [0, 1, 5, 37, 1000];
const failures: string[] = [];
let caseId = 0;

function check(name: string, got: number[], want: number[]): void {
  const d = firstDifference(got, want);
  if (d) failures.push(`rank ${rank} ${name}: ${d}`);
}

const reduced = (dtype: DT, op: Op, id: number, n: number) => Array.from({ length: n }, (_, i) => combine(dtype, op, ranks.map((r) => value(dtype, op, r, id, i))));

for (const dtype of DTYPES) {
  for (const op of OPS) {
    for (const n of LENGTHS) {
      const id = caseId++;
      const x = makeArray(dtype, inputs(dtype, op, rank, id, n));
      dist.allReduce(x, { op });
      check(`allReduce ${dtype} ${op} n=${n}`, read(dtype, x), reduced(dtype, op, id, n));
    }
    // Several tensors as one, and nonblocking: both started before either is waited on.
    const id = caseId++;
    const all = inputs(dtype, op, rank, id, 41);
    const parts = [makeArray(dtype, all.slice(0, 4)), makeArray(dtype, all.slice(4, 41))];
    const id2 = caseId++;
    const y = makeArray(dtype, inputs(dtype, op, rank, id2, 333));
    const w1 = dist.allReduceCoalesced(parts, { op, async: true });
    const w2 = dist.allReduce(y, { op, async: true });
    await w2.promise;
    w1.wait();
    check(`allReduceCoalesced ${dtype} ${op}`, [...read(dtype, parts[0]!), ...read(dtype, parts[1]!)], reduced(dtype, op, id, 41));
    check(`allReduce async ${dtype} ${op}`, read(dtype, y), reduced(dtype, op, id2, 333));
  }
  for (const n of LENGTHS) {
    const id = caseId++;
    const src = id % world;
    const x = makeArray(dtype, inputs(dtype, "sum", rank, id, n));
    dist.broadcast(x, src);
    check(`broadcast ${dtype} n=${n} src=${src}`, read(dtype, x), inputs(dtype, "sum", src, id, n));
    const list = ranks.map(() => makeArray(dtype, new Array(n).fill(9)));
    dist.allGather(list, makeArray(dtype, inputs(dtype, "sum", rank, id, n)));
    ranks.forEach((r) => check(`allGather ${dtype} n=${n} [${r}]`, read(dtype, list[r]!), inputs(dtype, "sum", r, id, n)));
    const flat = makeArray(dtype, new Array(n * world).fill(9));
    dist.allGatherIntoTensor(flat, makeArray(dtype, inputs(dtype, "sum", rank, id, n)));
    check(`allGatherIntoTensor ${dtype} n=${n}`, read(dtype, flat), ranks.flatMap((r) => inputs(dtype, "sum", r, id, n)));
    caseId++;
  }
}
dist.barrier();
await dist.barrier({ async: true }).promise;
let unserved = "";
try {
  dist.reduceScatter(makeArray("float32", [0]), ranks.map(() => makeArray("float32", [1])));
} catch (err) {
  unserved = (err as Error).message;
}
if (!/reduceScatter is not served by the mpi backend/.test(unserved)) failures.push(`rank ${rank} reduceScatter: expected the mpi backend's refusal, got ${JSON.stringify(unserved)}`);
console.log(`RESULT ${JSON.stringify({ failures, cases: caseId, backend: dist.getBackend(), transports: dist.getTransports() })}`);
await dist.destroyProcessGroup();
