// node --import tsx --conditions=source bench/elementwise.ts [--threads 1,2] [--sizes 65536,1048576,16777216] [--no-peer]
//
// Elementwise throughput of the cpu backend in GB/s (bytes read + written per second) for add, mul,
// relu and exp on float32, beside a memcpy baseline (TypedArray#set, what any kernel at memory
// speed would reach) and the strongest PyTorch here (bench/peer.ts) doing the same ops with out= tensors in the same run. Each
// figure is the median of 7 runs of enough calls to last about 0.2 s. The machine is shared and
// noisy: compare ratios from one run only. The API columns run the same ops through the public API
// (a fresh output every call, as a user's loop has it).
import { createCpuBackend, type CpuBackend } from "../src/backend/cpu/index.js";
import { exp, getBackend, randn, relu } from "../src/index.js";
import { loadAddon, nativeUnavailableReason } from "../src/backend/index.js";
import { describePeer, findPeer, runPeer } from "./peer.js";
import { median, printTable } from "./table.js";

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const THREADS = option("--threads", "1,2").split(",").map(Number);
const SIZES = option("--sizes", "65536,1048576,16777216").split(",").map(Number);
const OPS = ["memcpy", "add", "mul", "relu", "exp"] as const;
type Op = (typeof OPS)[number];

/** Bytes each element moves: two inputs and an output for add/mul, one of each otherwise. */
const bytesPerElement = (op: Op): number => (op === "add" || op === "mul" ? 12 : 8);

function shared(n: number): Float32Array {
  const a = new Float32Array(new SharedArrayBuffer(4 * n));
  for (let i = 0; i < n; i++) a[i] = Math.random() * 4 - 2;
  return a;
}

function timeGbps(bytes: number, call: () => void): number {
  call();
  const t0 = performance.now();
  call();
  const once = Math.max(1e-6, (performance.now() - t0) / 1e3);
  const reps = Math.max(1, Math.round(0.2 / once / 7));
  const rates: number[] = [];
  for (let r = 0; r < 7; r++) {
    const start = performance.now();
    for (let i = 0; i < reps; i++) call();
    rates.push((bytes * reps) / ((performance.now() - start) / 1e3) / 1e9);
  }
  return median(rates);
}

function measure(cpu: CpuBackend, op: Op, n: number): number {
  const a = shared(n);
  const b = shared(n);
  const out = new Float32Array(new SharedArrayBuffer(4 * n));
  const view = (data: Float32Array) => ({ data, offset: 0, strides: [1] });
  const bytes = n * bytesPerElement(op);
  switch (op) {
    case "memcpy": return timeGbps(bytes, () => out.set(a));
    case "add": return timeGbps(bytes, () => cpu.binary("add", view(a), view(b), [n], out));
    case "mul": return timeGbps(bytes, () => cpu.binary("mul", view(a), view(b), [n], out));
    case "relu": return timeGbps(bytes, () => cpu.unary("relu", a, 0, out, n));
    case "exp": return timeGbps(bytes, () => cpu.unary("exp", a, 0, out, n));
  }
}
/** The public API in a loop that keeps nothing: each call allocates its output (GB/s). */
function measureApi(op: Op, n: number): number {
  const a = randn([n]);
  const b = randn([n]);
  const bytes = n * bytesPerElement(op);
  switch (op) {
    case "memcpy": return timeGbps(bytes, () => a.clone());
    case "add": return timeGbps(bytes, () => a.add(b));
    case "mul": return timeGbps(bytes, () => a.mul(b));
    case "relu": return timeGbps(bytes, () => relu(a));
    case "exp": return timeGbps(bytes, () => exp(a));
  }
}

const PEER = `
import torch, time, statistics, sys, json
torch.set_num_threads(int(sys.argv[1]))
for n in json.loads(sys.argv[2]):
    a = torch.rand(n) * 4 - 2; b = torch.rand(n) * 4 - 2; c = torch.empty(n)
    calls = {"memcpy": lambda: c.copy_(a), "add": lambda: torch.add(a, b, out=c), "mul": lambda: torch.mul(a, b, out=c),
             "relu": lambda: torch.clamp_min(a, 0, out=c), "exp": lambda: torch.exp(a, out=c)}
    for op in ["memcpy", "add", "mul", "relu", "exp"]:
        f = calls[op]; nbytes = n * (12 if op in ("add", "mul") else 8)
        f(); t0 = time.perf_counter(); f(); once = max(1e-6, time.perf_counter() - t0)
        reps = max(1, round(0.2 / once / 7)); rates = []
        for r in range(7):
            t0 = time.perf_counter()
            for _ in range(reps): f()
            rates.append(nbytes * reps / (time.perf_counter() - t0) / 1e9)
        print("%s %d %.3f" % (op, n, statistics.median(rates)))
`;

function peer(threads: number): Map<string, number> | string {
  if (args.includes("--no-peer")) return "--no-peer given";
  const p = findPeer();
  console.log(describePeer(p, threads));
  if (typeof p === "string") return p;
  const r = runPeer(p, ["-c", PEER, String(threads), JSON.stringify(SIZES)], threads);
  if (r.status !== 0) return `the peer failed: ${r.stderr.trim().split("\n").pop()}`;
  const out = new Map<string, number>();
  for (const line of r.stdout.trim().split("\n")) {
    const [op, n, gbps] = line.split(" ");
    out.set(`${op} ${n}`, Number(gbps));
  }
  return out;
}

function main(): void {
  const addon = loadAddon();
  if (!addon) throw new Error(`bench/elementwise.ts needs the native addon: ${nativeUnavailableReason()}`);
  const cpu = createCpuBackend(addon);
  console.log(`ringtorch cpu backend, ${cpu.isa()} kernels; float32; GB/s = (bytes read + written) / s`);
  const rows: (string | number)[][] = [];
  let note = "";
  for (const threads of THREADS) {
    cpu.setNumThreads(threads);
    (getBackend() as CpuBackend).setNumThreads?.(threads);
    const ours = SIZES.map((n) => OPS.map((op) => measure(cpu, op, n)));
    const api = SIZES.map((n) => OPS.map((op) => measureApi(op, n)));
    const theirs = peer(threads);
    if (typeof theirs === "string") note = `PyTorch peer missing: ${theirs}`;
    SIZES.forEach((n, i) =>
      OPS.forEach((op, j) => {
        const t = typeof theirs === "string" ? NaN : (theirs.get(`${op} ${n}`) ?? NaN);
        rows.push([op, String(n), String(threads), ours[i][j], ours[i][j] / ours[i][0], t, ours[i][j] / t, api[i][j], api[i][j] / ours[i][j]]);
      }),
    );
  }
  printTable(["op", "elements", "threads", "ringtorch GB/s", "vs memcpy", "PyTorch GB/s", "ratio", "API GB/s", "API / kernel"], rows);
  console.log("(API: x.add(y), x.mul(y), relu(x), exp(x), x.clone() through the public API, each call allocating its output; bench/api.ts has them beside PyTorch's eager ops)");
  if (note) console.log(note);
}

main();
