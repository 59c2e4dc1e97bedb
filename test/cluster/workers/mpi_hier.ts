// One rank of test/cluster/mpi.test.ts's hierarchical all-reduce cases, run under mpirun with
// RINGTORCH_MPI_TEST_HOSTS (fake hosts): the dtypes and options test/distributed/workers/collectives.ts
// leaves out (float16), sizes around the ranks per host, all-reduces in flight while other
// operations run on MPI, checked against the reduction over all ranks' inputs computed here.
import * as dist from "../../../src/distributed/index.js";

await dist.initProcessGroup({ backend: "mpi", timeoutMs: 60_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const failures: string[] = [];
let cases = 0;

type Op = "sum" | "avg" | "product" | "min" | "max";
/** Small integers, so that every dtype holds every rank's input and every sum exactly. */
const input = (r: number, i: number, op: Op) => (op === "product" ? 1 + ((r + i) % 2) : ((r * 7 + i * 3) % 11) + 1);
function reference(op: Op, n: number): number[] {
  return Array.from({ length: n }, (_, i) => {
    const v = Array.from({ length: world }, (_, r) => input(r, i, op));
    if (op === "sum" || op === "avg") return v.reduce((a, b) => a + b, 0) / (op === "avg" ? world : 1);
    if (op === "product") return v.reduce((a, b) => a * b, 1);
    return op === "min" ? Math.min(...v) : Math.max(...v);
  });
}

type Ctor = Float32ArrayConstructor | Float64ArrayConstructor | Int32ArrayConstructor | Uint16ArrayConstructor;
const shared = <C extends Ctor>(C: C, n: number): InstanceType<C> => new (C as unknown as new (b: SharedArrayBuffer) => InstanceType<C>)(new SharedArrayBuffer(n * C.BYTES_PER_ELEMENT));
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const toBf16 = (v: number) => ((f32[0] = v), u32[0]! >>> 16);
const fromBf16 = (h: number) => ((u32[0] = h << 16), f32[0]!);
/** Small integers and their halves are exact in IEEE half: enough for these inputs and averages. */
function toF16(v: number): number {
  if (v === 0) return 0;
  const e = Math.floor(Math.log2(v));
  return ((e + 15) << 10) | Math.round((v / 2 ** e - 1) * 1024);
}
const fromF16 = (h: number) => (h === 0 ? 0 : 2 ** ((h >> 10) - 15) * (1 + (h & 1023) / 1024));

function check(name: string, got: number[], want: number[], tol: number): void {
  cases++;
  const bad = got.findIndex((g, i) => !(Math.abs(g - want[i]!) <= tol * Math.max(1, Math.abs(want[i]!))));
  if (bad >= 0) failures.push(`rank ${rank}: ${name}: element ${bad} is ${got[bad]}, expected ${want[bad]}`);
}

const local = Number(process.env.RINGTORCH_MPI_TEST_HOSTS?.split(",")[0] ?? 1);
const sizes = [1, local - 1, local + 1, 1001, 4099].filter((n) => n > 0);
for (const n of sizes) {
  for (const op of ["sum", "avg", "product", "min", "max"] as Op[]) {
    const want = reference(op, n);
    for (const [name, Ctor] of [["float32", Float32Array], ["float64", Float64Array]] as const) {
      const t = shared(Ctor, n).map((_, i) => input(rank, i, op));
      dist.allReduce(t, { op });
      check(`${name} ${op} n=${n}`, [...t], want, name === "float32" ? 1e-6 : 1e-12);
    }
    if (op !== "avg") {
      const t = shared(Int32Array, n).map((_, i) => input(rank, i, op));
      dist.allReduce(t, { op });
      check(`int32 ${op} n=${n}`, [...t], want, 0);
    }
    if (op === "sum" || op === "avg" || op === "max") {
      const h = shared(Uint16Array, n).map((_, i) => toF16(input(rank, i, op)));
      dist.allReduce(h, { op, float16: true });
      check(`float16 ${op} n=${n}`, [...h].map(fromF16), want, 1e-3);
      const b = shared(Uint16Array, n).map((_, i) => toBf16(input(rank, i, op)));
      dist.allReduce(b, { op });
      check(`bfloat16 ${op} n=${n}`, [...b].map(fromBf16), want, 1e-2);
    }
  }
}

// All-reduces in flight while other operations run on MPI: each side keeps the order ranks posted them in.
const n = 3001;
const a = shared(Float32Array, n).fill(rank + 1);
const b = shared(Float64Array, n).fill(rank);
const root = shared(Int32Array, 4).fill(rank === world - 1 ? 42 : 0);
const w1 = dist.allReduce(a, { async: true });
dist.broadcast(root, world - 1);
const w2 = dist.allReduce(b, { op: "max", async: true });
const w3 = dist.barrier({ async: true });
for (const w of [w3, w2, w1]) w.wait();
check("async sum beside a broadcast", [a[0]!, a[n - 1]!], [(world * (world + 1)) / 2, (world * (world + 1)) / 2], 0);
check("async max beside a barrier", [b[0]!, b[n - 1]!], [world - 1, world - 1], 0);
check("broadcast between all-reduces", [...root], [42, 42, 42, 42], 0);

console.log(`RESULT ${JSON.stringify({ rank, failures, cases })}`);
await dist.destroyProcessGroup();
