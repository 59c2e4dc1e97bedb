// One rank of the collectives suite (test/distributed/collectives.test.ts runs it as separate
// processes). Every rank rebuilds every rank's inputs, so it checks its own results against a
// one-line reference over all ranks' inputs. Prints RESULT {failures, hashes, transports, cases}.
import * as dist from "../../../src/distributed/index.js";
import { type Arr, combine, type DT, firstDifference, hashBytes, inputs, makeArray, type Op, randomFloats, read, value } from "./reference.js";
import { runExtraCases } from "./collectives_extra.js";

// RINGTORCH_TEST_BACKEND=mpi runs the same cases on the mpi backend (test/cluster/mpi.test.ts).
await dist.initProcessGroup(process.env.RINGTORCH_TEST_BACKEND === "mpi" ? { backend: "mpi", timeoutMs: 60_000 } : { timeoutMs: 60_000 });
const rank = dist.getRank();
const world = dist.getWorldSize();
const ALGOS = ["ring", "rhd", "tree"] as const;
const DTYPES: DT[] = ["float32", "float64", "int32", "bfloat16"];
const OPS: Op[] = ["sum", "avg", "product", "min", "max"];
// CASE_GRID=small keeps every dtype, op and algorithm but fewer lengths, for the launches that
// repeat a transport or world size already covered in full.
const SMALL = process.env.CASE_GRID === "small";
const LENGTHS = SMALL ? [0, 37] : [0, 1, 5, 37, 1000];
const failures: string[] = [];
const hashes: Record<string, string> = {};
let caseId = 0;
const ranks = Array.from({ length: world }, (_, r) => r);

function check(name: string, got: number[], want: number[]): void {
  const d = firstDifference(got, want);
  if (d) failures.push(`rank ${rank} ${name}: ${d}`);
}

function reduced(dtype: DT, op: Op, id: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => combine(dtype, op, ranks.map((r) => value(dtype, op, r, id, i))));
}

for (const algorithm of ALGOS) {
  for (const dtype of DTYPES) {
    for (const op of OPS) {
      for (const n of LENGTHS) {
        const id = caseId++;
        const x = makeArray(dtype, inputs(dtype, op, rank, id, n));
        dist.allReduce(x, { op, algorithm });
        check(`allReduce ${algorithm} ${dtype} ${op} n=${n}`, read(dtype, x), reduced(dtype, op, id, n));
      }
    }
    for (const op of ["sum", "max", "avg"] as Op[]) {
      for (const n of SMALL ? [5] : [0, 5, 1000]) {
        const id = caseId++;
        const dst = id % world;
        const mine = inputs(dtype, op, rank, id, n);
        const x = makeArray(dtype, mine);
        dist.reduce(x, dst, { op, algorithm });
        check(`reduce ${algorithm} ${dtype} ${op} n=${n} dst=${dst}`, read(dtype, x), rank === dst ? reduced(dtype, op, id, n) : read(dtype, makeArray(dtype, mine)));
      }
      for (const block of SMALL ? [0, 333] : [0, 1, 5, 333]) {
        const id = caseId++;
        const all = inputs(dtype, op, rank, id, block * world);
        const list = ranks.map((r) => makeArray(dtype, all.slice(r * block, (r + 1) * block)));
        const out = makeArray(dtype, new Array(block).fill(7));
        dist.reduceScatter(out, list, { op, algorithm });
        const want = reduced(dtype, op, id, block * world).slice(rank * block, (rank + 1) * block);
        check(`reduceScatter ${algorithm} ${dtype} ${op} block=${block}`, read(dtype, out), want);
        const out2 = makeArray(dtype, new Array(block).fill(7));
        dist.reduceScatterTensor(out2, makeArray(dtype, all), { op, algorithm });
        check(`reduceScatterTensor ${algorithm} ${dtype} ${op} block=${block}`, read(dtype, out2), want);
        check(`reduceScatter ${algorithm} leaves its input`, read(dtype, list[0]!), read(dtype, makeArray(dtype, all.slice(0, block))));
      }
    }
    for (const n of LENGTHS) {
      const id = caseId++;
      const src = (id + 1) % world;
      const x = makeArray(dtype, inputs(dtype, "sum", rank, id, n));
      dist.broadcast(x, src, { algorithm });
      check(`broadcast ${algorithm} ${dtype} n=${n} src=${src}`, read(dtype, x), inputs(dtype, "sum", src, id, n));

      const list = ranks.map(() => makeArray(dtype, new Array(n).fill(9)));
      dist.allGather(list, makeArray(dtype, inputs(dtype, "sum", rank, id, n)), { algorithm });
      ranks.forEach((r) => check(`allGather ${algorithm} ${dtype} n=${n} [${r}]`, read(dtype, list[r]!), inputs(dtype, "sum", r, id, n)));
      const flat = makeArray(dtype, new Array(n * world).fill(9));
      dist.allGatherIntoTensor(flat, makeArray(dtype, inputs(dtype, "sum", rank, id, n)), { algorithm });
      check(`allGatherIntoTensor ${algorithm} ${dtype} n=${n}`, read(dtype, flat), ranks.flatMap((r) => inputs(dtype, "sum", r, id, n)));
    }
  }
}

// allReduceCoalesced: parts in arrays of their own and disjoint views of one shared array (with
// untouched gaps between them) reduce as one collective; each part must equal the reduction of
// its own elements, and the gaps must keep their values.
for (const algorithm of ALGOS) {
  for (const dtype of DTYPES) {
    for (const op of OPS) {
      const sizes = SMALL ? [3, 0, 37] : [5, 0, 1, 1000, 37];
      const id = caseId++;
      const total = sizes.reduce((a, b) => a + b, 0);
      const all = inputs(dtype, op, rank, id, total);
      const want = reduced(dtype, op, id, total);
      const sharedArr = makeArray(dtype, new Array(total + sizes.length).fill(3));
      const Ctor = sharedArr.constructor as new (b: ArrayBufferLike, o: number, n: number) => Arr;
      let at = 0;
      let slot = 0;
      const parts = sizes.map((n, k) => {
        const values = all.slice(at, at + n);
        at += n;
        if (k % 2 === 0) return makeArray(dtype, values);
        const view = new Ctor(sharedArr.buffer, (slot + 1) * sharedArr.BYTES_PER_ELEMENT, n);
        slot += n + 1;
        const filled = makeArray(dtype, values);
        view.set(filled as never);
        return view;
      });
      dist.allReduceCoalesced(parts, { op, algorithm });
      at = 0;
      parts.forEach((part, k) => {
        check(`allReduceCoalesced ${algorithm} ${dtype} ${op} part ${k}`, read(dtype, part), want.slice(at, at + sizes[k]!));
        at += sizes[k]!;
      });
      const gaps = read(dtype, sharedArr).filter((_, i) => i === 0 || !parts.some((p) => p.buffer === sharedArr.buffer && i >= p.byteOffset / p.BYTES_PER_ELEMENT && i < p.byteOffset / p.BYTES_PER_ELEMENT + p.length));
      check(`allReduceCoalesced ${algorithm} ${dtype} ${op} leaves the gaps`, gaps, gaps.map(() => read(dtype, makeArray(dtype, [3]))[0]!));
    }
    // AVG with a divisor of the caller's (DDP under join()): the sum divided by it, rounded once.
    if (dtype === "float32" || dtype === "float64") {
      const id = caseId++;
      const n = SMALL ? 37 : 1000;
      const x = makeArray(dtype, inputs(dtype, "sum", rank, id, n));
      dist.allReduceCoalesced([x], { op: "avg", divisor: 3, algorithm });
      const sums = reduced(dtype, "sum", id, n);
      check(`allReduceCoalesced ${algorithm} ${dtype} avg divisor 3`, read(dtype, x), sums.map((v) => (dtype === "float64" ? v / 3 : Math.fround(v / 3))));
    }
  }
}

// Bad calls fail before anything is sent, with the reason.
{
  const expectError = (name: string, fn: () => void, pattern: RegExp) => {
    try {
      fn();
      failures.push(`rank ${rank} ${name}: no error`);
    } catch (err) {
      if (!pattern.test((err as Error).message)) failures.push(`rank ${rank} ${name}: unclear error: ${(err as Error).message}`);
    }
  };
  const buf = makeArray("float32", [1, 2, 3, 4]);
  const overlapping = [new Float32Array(buf.buffer, 0, 3), new Float32Array(buf.buffer, 8, 2)];
  expectError("allReduceCoalesced of overlapping tensors", () => dist.allReduceCoalesced(overlapping), /tensors\[0\] and tensors\[1\] share memory/);
  // An empty tensor sorted between two that overlap must not hide the overlap.
  const hidden = [new Float32Array(buf.buffer, 0, 4), new Float32Array(buf.buffer, 4, 0), new Float32Array(buf.buffer, 8, 1)];
  expectError("allReduceCoalesced of overlapping tensors around an empty one", () => dist.allReduceCoalesced(hidden), /tensors\[0\] and tensors\[2\] share memory/);
  expectError("allReduceCoalesced of mixed dtypes", () => dist.allReduceCoalesced([makeArray("float32", [1]), makeArray("float64", [1])]), /tensors\[1\] has dtype float64, but tensors\[0\] has dtype float32/);
  expectError("allReduceCoalesced of nothing", () => dist.allReduceCoalesced([]), /non-empty array/);
  expectError("a divisor without AVG", () => dist.allReduce(makeArray("float32", [1]), { divisor: 2 }), /divisor option goes with op dist.ReduceOp.AVG/);
  expectError("a divisor of zero", () => dist.allReduce(makeArray("float32", [1]), { op: "avg", divisor: 0 }), /divisor must be a positive number/);
}

for (const dtype of DTYPES) {
  for (const n of [0, 3, 1000]) {
    const id = caseId++;
    const root = id % world;
    const block = (r: number) => inputs(dtype, "sum", 100 + r, id, n);
    const out = makeArray(dtype, new Array(n).fill(9));
    dist.scatter(out, rank === root ? ranks.map((r) => makeArray(dtype, block(r))) : null, root);
    check(`scatter ${dtype} n=${n} src=${root}`, read(dtype, out), block(rank));

    const gathered = rank === root ? ranks.map(() => makeArray(dtype, new Array(n).fill(9))) : null;
    dist.gather(makeArray(dtype, inputs(dtype, "sum", rank, id, n)), gathered, root);
    if (gathered) ranks.forEach((r) => check(`gather ${dtype} n=${n} dst=${root} [${r}]`, read(dtype, gathered[r]!), inputs(dtype, "sum", r, id, n)));

    const size = (from: number, to: number) => (from + 2 * to + id) % 4;
    const piece = (from: number, to: number) => inputs(dtype, "sum", from * 10 + to, id, size(from, to));
    const outs = ranks.map((r) => makeArray(dtype, new Array(size(r, rank)).fill(9)));
    dist.allToAll(outs, ranks.map((r) => makeArray(dtype, piece(rank, r))));
    ranks.forEach((r) => check(`allToAll ${dtype} [${r}]`, read(dtype, outs[r]!), piece(r, rank)));

    const rows = 2 * world;
    const single = makeArray(dtype, new Array(rows * 3).fill(9));
    dist.allToAllSingle(single, makeArray(dtype, inputs(dtype, "sum", rank, id, rows * 3)));
    const wantSingle = ranks.flatMap((r) => inputs(dtype, "sum", r, id, rows * 3).slice(rank * 6, rank * 6 + 6));
    check(`allToAllSingle ${dtype}`, read(dtype, single), wantSingle);
  }
}

for (const algorithm of [...ALGOS, "auto"] as const) {
  const id = caseId++;
  const n = 10007;
  const x = makeArray("float32", randomFloats(rank * 7919 + id, n));
  dist.allReduce(x, { algorithm });
  hashes[`random allReduce ${algorithm}`] = hashBytes(x);
  const want = Array.from({ length: n }, () => 0);
  for (const r of ranks) randomFloats(r * 7919 + id, n).forEach((v, i) => (want[i]! += Math.fround(v)));
  const bad = Array.from(x).findIndex((v, i) => Math.abs(v - want[i]!) > 1e-5 * world);
  if (bad >= 0) failures.push(`rank ${rank} random allReduce ${algorithm}: element ${bad} is ${x[bad]}, expected about ${want[bad]}`);
}

caseId = runExtraCases({ rank, world, check, failures, hashes, caseId });
dist.barrier();
const transports = dist.getTransports();
await dist.destroyProcessGroup();
console.log(`RESULT ${JSON.stringify({ failures, hashes, transports, cases: caseId })}`);
export type { Arr };
