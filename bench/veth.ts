// node --import tsx bench/veth.ts          (as root, from the repository root)
//
// The TCP transport between two network namespaces joined by a veth pair (what two hosts look
// like to the kernel, without the NIC), and the same on loopback: per-hop latency α from the
// median time of a 4-byte all-reduce and bandwidth B from 64 MB ones, over the ring's model
//   T(p, n) = 2(p - 1)·α + 2(p - 1)/p · n / B
// (for p = 2: α = T(4 B) / 2, B = n / (T(n) − 2α)). Then projects the all-reduce of a model's
// gradients and DDP's step time to 8–256 ranks: step = compute + the all-reduce time backward
// does not hide (DDP overlaps it with backward, taken as 2/3 of compute). BENCH_COMPUTE_MS (100)
// sets the one-rank compute time per step; RINGTORCH_TCP_STREAMS (4) the streams per pair.
// A veth pair stays inside one kernel: its B is a ceiling, not a NIC's figure.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import * as dist from "../src/distributed/index.js";
import { childNodeFlags } from "../src/launch/young_generation.js";

const SMALL_REPS = 200;
const LARGE_MB = 64;

interface Measured {
  alphaUs: number;
  bandwidthGBs: number;
}

async function rank(): Promise<void> {
  await dist.initProcessGroup();
  const tiny = new Float32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 20; i++) dist.allReduce(tiny);
  const small: number[] = [];
  for (let i = 0; i < SMALL_REPS; i++) {
    const t0 = performance.now();
    dist.allReduce(tiny);
    small.push(performance.now() - t0);
  }
  const big = new Float32Array(new SharedArrayBuffer(LARGE_MB * 2 ** 20)).fill(1);
  for (let i = 0; i < 2; i++) dist.allReduce(big);
  const large: number[] = [];
  for (let i = 0; i < 7; i++) {
    dist.barrier();
    const t0 = performance.now();
    dist.allReduce(big);
    large.push(performance.now() - t0);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const alphaMs = median(small) / 2;
  const bandwidthGBs = (LARGE_MB * 2 ** 20) / ((median(large) - 2 * alphaMs) / 1000) / 1e9;
  if (dist.getRank() === 0) console.log(`MEASURED ${JSON.stringify({ alphaUs: alphaMs * 1000, bandwidthGBs, transports: dist.getTransports() })}`);
  await dist.destroyProcessGroup();
}

function sh(cmd: string): void {
  const r = spawnSync("sh", ["-c", cmd], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr.trim()}`);
}

/** Two ranks, each run by `prefix` (e.g. `ip netns exec A`), over TCP; rank 0 hosts the store on addrs[0]. */
async function measure(prefixes: string[][], addrs: string[]): Promise<Measured> {
  const token = randomBytes(16).toString("hex");
  const self = fileURLToPath(import.meta.url);
  const port = 29000 + Math.floor(Math.random() * 1000);
  const children = prefixes.map((prefix, r) =>
    spawn(prefix[0] ?? process.execPath, [...prefix.slice(1), ...(prefix.length ? [process.execPath] : []), ...childNodeFlags(process.execArgv, process.env), "--import", "tsx", self], {
      env: {
        ...process.env,
        BENCH_ROLE: "rank",
        RANK: String(r),
        WORLD_SIZE: "2",
        MASTER_ADDR: addrs[0]!,
        MASTER_PORT: String(port),
        RINGTORCH_SOCKET_ADDR: addrs[r]!,
        RINGTORCH_TRANSPORT: "tcp",
        RINGTORCH_STORE_TOKEN: token,
      },
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  let out = "";
  children[0]!.stdout.on("data", (d) => (out += d));
  children[1]!.stdout.resume();
  const codes = await Promise.all(children.map((c) => new Promise<number | null>((r) => c.on("close", r))));
  if (codes.some((c) => c !== 0)) throw new Error(`a rank failed (exit codes ${codes.join(", ")})`);
  return JSON.parse(out.split("\n").find((l) => l.startsWith("MEASURED "))!.slice(9)) as Measured;
}

async function overVeth(): Promise<Measured> {
  const tag = `rt${process.pid % 100000}`;
  const [a, b] = [`${tag}a`, `${tag}b`];
  try {
    sh(`ip netns add ${a} && ip netns add ${b}`);
    sh(`ip link add ${a}v type veth peer name ${b}v && ip link set ${a}v netns ${a} && ip link set ${b}v netns ${b}`);
    sh(`ip -n ${a} addr add 10.231.7.1/24 dev ${a}v && ip -n ${b} addr add 10.231.7.2/24 dev ${b}v`);
    sh(`ip -n ${a} link set ${a}v up && ip -n ${b} link set ${b}v up && ip -n ${a} link set lo up && ip -n ${b} link set lo up`);
    return await measure([["ip", "netns", "exec", a], ["ip", "netns", "exec", b]], ["10.231.7.1", "10.231.7.2"]);
  } finally {
    // Deleting a namespace deletes its end of the veth pair, and with it the other end.
    spawnSync("sh", ["-c", `ip netns del ${a}; ip netns del ${b}`]);
  }
}

/** Ring all-reduce of `bytes` over p ranks, in ms. */
const ringMs = (m: Measured, p: number, bytes: number) => 2 * (p - 1) * (m.alphaUs / 1000) + ((2 * (p - 1)) / p) * (bytes / (m.bandwidthGBs * 1e9)) * 1000;

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error("bench/veth.ts creates network namespaces and must run as root");
  const loopback = await measure([[], []], ["127.0.0.1", "127.0.0.1"]);
  const veth = await overVeth();
  const streams = process.env.RINGTORCH_TCP_STREAMS ?? "4";
  console.log(`TCP transport, 2 ranks, ${streams} stream(s) per pair: α = per-hop latency, B = per-link bandwidth`);
  console.log(`loopback: α ${loopback.alphaUs.toFixed(1)} µs, B ${loopback.bandwidthGBs.toFixed(2)} GB/s`);
  console.log(`veth:     α ${veth.alphaUs.toFixed(1)} µs, B ${veth.bandwidthGBs.toFixed(2)} GB/s`);
  const computeMs = Number(process.env.BENCH_COMPUTE_MS ?? 100);
  const backwardMs = (2 / 3) * computeMs;
  console.log(`\nProjected with the veth figures (ring all-reduce; compute ${computeMs} ms per step, backward ${backwardMs.toFixed(0)} ms of it hides communication)`);
  console.log("gradients            | ranks | all-reduce ms | step ms | scaling efficiency");
  console.log("-------------------- | ----- | ------------- | ------- | ------------------");
  for (const [name, bytes] of [["MLP (4 MB)", 4e6], ["GPT-2 small (498 MB)", 124.4e6 * 4]] as const) {
    for (const p of [8, 16, 32, 64, 128, 256]) {
      const ar = ringMs(veth, p, bytes);
      const step = computeMs + Math.max(0, ar - backwardMs);
      console.log([name.padEnd(20), String(p).padStart(5), ar.toFixed(1).padStart(13), step.toFixed(1).padStart(7), `${((100 * computeMs) / step).toFixed(0)}%`.padStart(18)].join(" | "));
    }
  }
}

if (process.env.BENCH_ROLE === "rank") await rank();
else await main();
