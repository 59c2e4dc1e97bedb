// Cases of the collectives suite beyond the dtype × op × length grid: large (pipelined)
// messages, point-to-point, subgroups, asynchronous work, tensors, and progress while the main
// thread is busy.
import * as dist from "../../../src/distributed/index.js";
import { tensor } from "../../../src/ops/creation.js";
import { combine, inputs, makeArray, read, value } from "./reference.js";

interface Ctx {
  rank: number;
  world: number;
  check: (name: string, got: number[], want: number[]) => void;
  failures: string[];
  hashes: Record<string, string>;
  caseId: number;
}

export function runExtraCases(c: Ctx): number {
  const { rank, world, check } = c;
  const ranks = Array.from({ length: world }, (_, r) => r);
  let id = c.caseId;

  // Large enough to span many shared-memory slots and to pick the bandwidth algorithms.
  const big = 70_001;
  for (const algorithm of ["ring", "rhd", "tree", "auto"] as const) {
    const cid = id++;
    const x = makeArray("float32", inputs("float32", "sum", rank, cid, big));
    dist.allReduce(x, { algorithm });
    check(`large allReduce ${algorithm}`, read("float32", x), Array.from({ length: big }, (_, i) => combine("float32", "sum", ranks.map((r) => value("float32", "sum", r, cid, i)))));
    const y = makeArray("float64", inputs("float64", "sum", rank, cid, big));
    const src = world - 1;
    dist.broadcast(y, src, { algorithm });
    check(`large broadcast ${algorithm}`, read("float64", y), inputs("float64", "sum", src, cid, big));
    const block = 30_001;
    const out = makeArray("int32", new Array(block).fill(0));
    dist.reduceScatterTensor(out, makeArray("int32", inputs("int32", "max", rank, cid, block * world)), { op: "max", algorithm });
    check(`large reduceScatterTensor ${algorithm}`, read("int32", out), Array.from({ length: block }, (_, i) => combine("int32", "max", ranks.map((r) => value("int32", "max", r, cid, rank * block + i)))));
    const flat = makeArray("bfloat16", new Array(block * world).fill(0));
    dist.allGatherIntoTensor(flat, makeArray("bfloat16", inputs("bfloat16", "sum", rank, cid, block)), { algorithm });
    check(`large allGather ${algorithm}`, read("bfloat16", flat), ranks.flatMap((r) => inputs("bfloat16", "sum", r, cid, block)));
    const red = makeArray("float32", inputs("float32", "min", rank, cid, big));
    dist.reduce(red, 0, { op: "min", algorithm });
    if (rank === 0) check(`large reduce ${algorithm}`, read("float32", red), Array.from({ length: big }, (_, i) => combine("float32", "min", ranks.map((r) => value("float32", "min", r, cid, i)))));
  }

  // Typed arrays over ordinary (not shared) memory go through a shared staging copy.
  const plain = new Float64Array(5).map((_, i) => rank + i);
  dist.allReduce(plain, { op: "max" });
  check("allReduce on a plain Float64Array", Array.from(plain), [0, 1, 2, 3, 4].map((i) => world - 1 + i));

  // Tensors: the API torch users call.
  const t = tensor([1, 2, 3].map((v) => v * (rank + 1)), { dtype: "float32" });
  const version = t.storage.version;
  dist.allReduce(t, { op: dist.ReduceOp.SUM });
  const tri = (world * (world + 1)) / 2;
  check("allReduce on a Tensor", Array.from(t.storage.data as Float32Array).slice(t.offset, t.offset + 3), [tri, 2 * tri, 3 * tri]);
  if (t.storage.version === version) c.failures.push(`rank ${rank}: allReduce did not bump the tensor's version counter`);
  const tb = tensor([rank, rank], { dtype: "bfloat16" });
  dist.allReduce(tb, { op: dist.ReduceOp.AVG });
  const avg = combine("bfloat16", "avg", ranks);
  check("allReduce AVG on a bfloat16 Tensor", read("bfloat16", (tb.storage.data as Uint16Array).subarray(tb.offset, tb.offset + 2)), [avg, avg]);

  // Several asynchronous collectives in flight, awaited in another order.
  const works: [dist.Work, Float32Array, number][] = [];
  for (let k = 0; k < 3; k++) {
    const a = makeArray("float32", [rank + k, 1]) as Float32Array;
    works.push([dist.allReduce(a, { async: true }), a, k]);
  }
  for (const [w, a, k] of works.reverse()) {
    w.wait();
    check(`async allReduce ${k}`, Array.from(a), [tri - world + k * world, world]);
  }

  if (world > 1) {
    // A ring of point-to-point messages: isend then blocking recv (the pair must not deadlock).
    for (const n of [0, 3, 600_000]) {
      const cid = id++;
      const right = (rank + 1) % world;
      const left = (rank + world - 1) % world;
      const s = dist.isend(makeArray("float32", inputs("float32", "sum", rank, cid, n)), right, { tag: 7 });
      const got = makeArray("float32", new Array(n).fill(0));
      const from = dist.recv(got, left, { tag: 7 });
      s.wait();
      check(`send/recv n=${n}`, read("float32", got), inputs("float32", "sum", left, cid, n));
      if (from !== left) c.failures.push(`rank ${rank}: recv returned ${from}, expected ${left}`);
    }
    const exchange = dist.batchIsendIrecv([
      { op: "isend", tensor: makeArray("int32", [rank, rank]), peer: (rank + 1) % world },
      { op: "irecv", tensor: makeArray("int32", [0, 0]), peer: (rank + world - 1) % world },
    ]);
    exchange.forEach((w) => w.wait());

    // Progress while the main thread computes: poll the shared memory without yielding.
    const n = 4 << 20;
    const x = new Float32Array(new SharedArrayBuffer(4 * n)).fill(1);
    const w = dist.allReduce(x, { async: true });
    const deadline = Date.now() + 20_000;
    while (x[n - 1] !== world && Date.now() < deadline);
    if (x[n - 1] !== world) c.failures.push(`rank ${rank}: the asynchronous allReduce made no progress while the main thread was busy`);
    w.wait();
    check("allReduce progressed while the main thread was busy", [x[0]!, x[n >> 1]!, x[n - 1]!], [world, world, world]);
  }

  if (world >= 3) {
    // Every rank creates every group, in the same order, members or not.
    const g = dist.newGroup([0, 2]);
    const rest = dist.newGroup(ranks.filter((r) => r !== 0));
    const a = makeArray("float64", [rank + 1, 10]);
    dist.allReduce(a, { group: g, op: "sum" });
    check("subgroup [0,2] allReduce", read("float64", a), g.isMember() ? [4, 20] : [rank + 1, 10]);
    if (dist.getRank(g) !== (rank === 0 ? 0 : rank === 2 ? 1 : -1)) c.failures.push(`rank ${rank}: getRank(group) is ${dist.getRank(g)}`);
    const b = makeArray("int32", [rank * 5]);
    if (rest.isMember()) {
      dist.broadcast(b, world - 1, { group: rest });
      check("subgroup broadcast from global rank", read("int32", b), [(world - 1) * 5]);
      dist.barrier({ group: rest });
    }
    dist.allReduce(a, { group: g, op: "sum", async: true }).wait();
  }
  return id;
}
