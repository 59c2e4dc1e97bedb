// node --import tsx bench/allreduce.ts          (from the repository root)
//
// All-reduce of 1, 16 and 64 MB of float32 between 2 processes on this machine, measured the way
// bench/torch/ddp.py measures gloo (3 warm-up calls, 7 rounds of max(3, 64/MB) calls,
// median), over shared memory and over loopback TCP (RINGTORCH_TCP_STREAMS connections per pair,
// 1 unless set, as in the library), then gloo itself through the strongest PyTorch here (bench/peer.ts) in the same
// run. Prints algorithm bandwidth (bytes per rank / time) and bus bandwidth (algbw × 2(n-1)/n,
// what each link carries). Where Open MPI's
// mpicc and mpirun are installed (Debian: libopenmpi-dev), ringtorch's backend "mpi" as it runs by
// default (rt-mpi; on one host its all-reduce is ringtorch's shared memory) and with
// RINGTORCH_MPI_ALLREDUCE=mpi (rt-mpi(MPI): MPI_Allreduce), and MPI_Allreduce itself in C (bench/mpi/allreduce.c).
// With a C compiler, the loopback TCP ceiling too (loopback_tcp.c: the bytes each rank moves, no reduction).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as dist from "../src/distributed/index.js";
import { describePeer, findPeer, peerScript, runPeer } from "./peer.js";
import { peerRows, runMpi, runRingtorchMpi, type Row } from "./mpi/runs.js";
import { childNodeFlags } from "../src/launch/young_generation.js";

// BENCH_SIZES_MB=16,64 measures only those sizes (bench/mpi/compare.ts uses it).
const SIZES_MB = process.env.BENCH_SIZES_MB ? process.env.BENCH_SIZES_MB.split(",").map(Number) : [1, 16, 64];
const WORLD = 2;

async function rank(): Promise<void> {
  await dist.initProcessGroup(process.env.BENCH_BACKEND === "mpi" ? { backend: "mpi" } : {});
  const rows: Row[] = [];
  for (const mb of SIZES_MB) {
    const n = (mb * 2 ** 20) / 4;
    const t = new Float32Array(new SharedArrayBuffer(4 * n)).fill(1);
    for (let i = 0; i < 3; i++) dist.allReduce(t);
    const times: number[] = [];
    for (let r = 0; r < 7; r++) {
      const reps = Math.max(3, Math.floor(64 / mb));
      dist.barrier();
      const t0 = performance.now();
      for (let i = 0; i < reps; i++) dist.allReduce(t);
      times.push((performance.now() - t0) / reps);
    }
    const check = new Float32Array(new SharedArrayBuffer(16)).fill(dist.getRank() + 1);
    dist.allReduce(check);
    const world = dist.getWorldSize();
    if (check[0] !== (world * (world + 1)) / 2) throw new Error(`all-reduce gave ${check[0]}, expected ${(world * (world + 1)) / 2}`);
    times.sort((a, b) => a - b);
    rows.push({ mb, medianMs: times[3]!, minMs: times[0]! });
  }
  if (dist.getRank() === 0) console.log(`ROWS ${JSON.stringify({ rows, transports: dist.getTransports() })}`);
  await dist.destroyProcessGroup();
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function runRingtorch(extraEnv: Record<string, string>): Promise<{ rows: Row[]; transports: string[] }> {
  const port = await freePort();
  const token = randomBytes(16).toString("hex");
  const self = fileURLToPath(import.meta.url);
  const children = Array.from({ length: WORLD }, (_, r) =>
    spawn(process.execPath, [...childNodeFlags(process.execArgv, process.env), "--import", "tsx", self], {
      env: { ...process.env, ...extraEnv, BENCH_ROLE: "rank", MASTER_ADDR: "127.0.0.1", MASTER_PORT: String(port), RANK: String(r), WORLD_SIZE: String(WORLD), RINGTORCH_STORE_TOKEN: token },
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  let out = "";
  children[0]!.stdout.on("data", (d) => (out += d));
  children[1]!.stdout.resume();
  const codes = await Promise.all(children.map((c) => new Promise<number | null>((r) => c.on("close", r))));
  if (codes.some((c) => c !== 0)) throw new Error(`a benchmark rank failed (exit codes ${codes.join(", ")})`);
  const line = out.split("\n").find((l) => l.startsWith("ROWS "));
  return JSON.parse(line!.slice(5));
}

function runGloo(describe: boolean): Map<number, Row> | string {
  const peer = findPeer();
  if (describe) console.log(describePeer(peer, 1));
  if (typeof peer === "string") return `gloo was not measured: ${peer}`;
  let r = runPeer(peer, [peerScript("ddp.py"), "allreduce"], 1, {}, 600_000);
  // ddp.py always uses port 29533: wait out another run of it on this machine.
  for (let attempt = 0; attempt < 10 && /Address already in use|Connection refused/.test(r.stderr); attempt++) {
    spawnSync("sleep", ["10"]);
    r = runPeer(peer, [peerScript("ddp.py"), "allreduce"], 1, {}, 600_000);
  }
  const rows = peerRows(r.stdout);
  return rows.size > 0 ? rows : `gloo run failed: ${r.stderr.slice(-500)}`;
}

/** The loopback TCP ceiling (loopback_tcp.c): each process sends and receives `mb` at once, no reduction. */
function runLoopback(): Row[] | string {
  if (spawnSync("sh", ["-c", "command -v cc"]).status !== 0) return "the loopback ceiling was not measured: no C compiler (cc)";
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-loopback-"));
  try {
    const exe = join(dir, "loopback_tcp");
    const built = spawnSync("cc", ["-O2", "-pthread", "-o", exe, fileURLToPath(new URL("./loopback_tcp.c", import.meta.url))], { encoding: "utf8" });
    if (built.status !== 0) return `the loopback ceiling was not measured: cc failed: ${built.stderr.slice(-300)}`;
    const r = spawnSync(exe, SIZES_MB.map(String), { encoding: "utf8", timeout: 600_000 });
    const rows = [...(r.stdout ?? "").matchAll(/loopback (\d+)MB: time ms min=([\d.]+) median=([\d.]+)/g)].map((m) => ({ mb: Number(m[1]), minMs: Number(m[2]), medianMs: Number(m[3]) }));
    return rows.length > 0 ? rows : `the loopback ceiling run failed (exit ${r.status})`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const gbps = (mb: number, ms: number) => (mb * 2 ** 20) / (ms / 1000) / 1e9;
const busFactor = (2 * (WORLD - 1)) / WORLD;

const cell = (v: number, width: number, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : "n/a").padStart(width);

/** Each size's median time over the repeats (a string: why that variant was not measured). */
function combine(runs: (Row[] | string)[]): Row[] | string {
  const ok = runs.filter((r): r is Row[] => typeof r !== "string");
  if (ok.length === 0) return runs[0] as string;
  return ok[0]!.map((first) => {
    const times = ok.map((r) => r.find((x) => x.mb === first.mb)!.medianMs).sort((a, b) => a - b);
    return { mb: first.mb, medianMs: times[times.length >> 1]!, minMs: Math.min(...ok.map((r) => r.find((x) => x.mb === first.mb)!.minMs)) };
  });
}

// BENCH_REPEAT=N runs every variant N times in turn (shm, tcp, rt-mpi, rt-mpi(MPI), gloo, MPI, shm,
// …), so that all see the same machine, and prints the median over the N; on a busy machine
// one pass of each compares moments, not transports.
const REPEAT = Number(process.env.BENCH_REPEAT ?? "1");

async function main(): Promise<void> {
  const streams = process.env.RINGTORCH_TCP_STREAMS ?? "1";
  const runs = { shm: [], tcp: [], loopback: [], rtMpi: [], rtMpiOnMpi: [], gloo: [], mpi: [] } as Record<string, (Row[] | string)[]>;
  for (let k = 0; k < REPEAT; k++) {
    runs.shm!.push((await runRingtorch({ RINGTORCH_TRANSPORT: "auto" })).rows);
    runs.tcp!.push((await runRingtorch({ RINGTORCH_TRANSPORT: "tcp", RINGTORCH_TCP_STREAMS: streams })).rows);
    runs.loopback!.push(runLoopback());
    runs.rtMpi!.push(runRingtorchMpi(fileURLToPath(import.meta.url)));
    runs.rtMpiOnMpi!.push(runRingtorchMpi(fileURLToPath(import.meta.url), "mpi"));
    const g = runGloo(k === 0);
    runs.gloo!.push(typeof g === "string" ? g : [...g.values()]);
    runs.mpi!.push(runMpi());
  }
  const shm = combine(runs.shm!) as Row[];
  const tcp = combine(runs.tcp!) as Row[];
  const loopback = combine(runs.loopback!);
  const rtMpi = combine(runs.rtMpi!);
  const rtMpiOnMpi = combine(runs.rtMpiOnMpi!);
  const glooRows = combine(runs.gloo!);
  const gloo = typeof glooRows === "string" ? glooRows : new Map(glooRows.map((r) => [r.mb, r]));
  const mpi = combine(runs.mpi!);
  console.log(`all-reduce, float32, ${WORLD} processes on one machine; medians of 7 rounds${REPEAT > 1 ? `, then the median over ${REPEAT} alternations` : ""}; algbw = bytes per rank / time, busbw = algbw × ${busFactor}`);
  console.log(`shm, tcp: ringtorch over shared memory / loopback TCP with ${streams} stream(s) per pair (RINGTORCH_TCP_STREAMS); tcp/loopback: tcp's algbw over the plain-socket reference's (loopback_tcp.c); ` +
    'rt-mpi: ringtorch\'s backend "mpi" as it runs by default (on one host its all-reduce runs on ringtorch\'s shared memory, the other collectives on Open MPI); ' +
    'rt-mpi(MPI): the same with RINGTORCH_MPI_ALLREDUCE=mpi (MPI_Allreduce); MPI: MPI_Allreduce in C (bench/mpi/allreduce.c)');
  console.log("size  | shm ms | shm algbw | tcp ms | tcp algbw | tcp busbw | tcp/loopback | gloo ms | gloo algbw | tcp/gloo | shm/gloo | rt-mpi algbw | rt-mpi/shm | rt-mpi(MPI) algbw | rt-mpi(MPI)/shm | MPI ms | MPI algbw | shm/MPI | tcp/MPI");
  console.log("----- | ------ | --------- | ------ | --------- | --------- | ------------ | ------- | ---------- | -------- | -------- | ------------ | ---------- | ----------------- | --------------- | ------ | --------- | ------- | -------");
  for (const [i, row] of shm.entries()) {
    const t = tcp[i]!;
    const salg = gbps(row.mb, row.medianMs);
    const talg = gbps(t.mb, t.medianMs);
    const lb = typeof loopback === "string" ? undefined : loopback.find((x) => x.mb === row.mb);
    const lbalg = lb ? gbps(lb.mb, lb.medianMs) : NaN;
    const g = typeof gloo === "string" ? undefined : gloo.get(row.mb);
    const galg = g ? gbps(g.mb, g.medianMs) : NaN;
    const m = typeof mpi === "string" ? undefined : mpi.find((x) => x.mb === row.mb);
    const malg = m ? gbps(m.mb, m.medianMs) : NaN;
    const rm = typeof rtMpi === "string" ? undefined : rtMpi.find((x) => x.mb === row.mb);
    const rmalg = rm ? gbps(rm.mb, rm.medianMs) : NaN;
    const rmm = typeof rtMpiOnMpi === "string" ? undefined : rtMpiOnMpi.find((x) => x.mb === row.mb);
    const rmmalg = rmm ? gbps(rmm.mb, rmm.medianMs) : NaN;
    const cells = [
      `${row.mb} MB`.padEnd(5),
      cell(row.medianMs, 6),
      cell(salg, 9),
      cell(t.medianMs, 6),
      cell(talg, 9),
      cell(talg * busFactor, 9),
      `${cell(talg / lbalg, 11)}x`,
      cell(g ? g.medianMs : NaN, 7),
      cell(galg, 10),
      `${cell(talg / galg, 7)}x`,
      `${cell(salg / galg, 7)}x`,
      cell(rmalg, 12),
      `${cell(rmalg / salg, 9)}x`,
      cell(rmmalg, 17),
      `${cell(rmmalg / salg, 14)}x`,
      cell(m ? m.medianMs : NaN, 6),
      cell(malg, 9),
      `${cell(salg / malg, 6)}x`,
      `${cell(talg / malg, 6)}x`,
    ];
    console.log(cells.join(" | "));
  }
  if (typeof loopback === "string") console.log(`note: ${loopback}`);
  else console.log(`plain-socket loopback reference (loopback_tcp.c: both processes send and receive the size at once on one socket, no reduction; not a ceiling), GB/s per direction: ${loopback.map((r) => `${r.mb} MB ${gbps(r.mb, r.medianMs).toFixed(2)}`).join(", ")}`);
  if (typeof gloo === "string") console.log(`note: ${gloo}`);
  if (typeof mpi === "string") console.log(`note: ${mpi}`);
  if (typeof rtMpi === "string") console.log(`note: ${rtMpi}`);
  if (typeof rtMpiOnMpi === "string") console.log(`note: ${rtMpiOnMpi}`);
}

if (process.env.BENCH_ROLE === "rank") await rank();
else await main();
