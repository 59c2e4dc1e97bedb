// A rank that joins over TCP and reports its established sockets' buffer sizes as the kernel
// reports them (`ss`'s skmem: rb is the receive buffer, tb the send buffer), for
// tcp_buffers.test.ts. The all-reduce before the report makes sure the transport carried data.
import { spawnSync } from "node:child_process";
import * as dist from "../../../src/distributed/index.js";

await dist.initProcessGroup({ timeoutMs: 20_000 });
const x = new Float32Array(new SharedArrayBuffer(4 << 20)).fill(dist.getRank() + 1);
dist.allReduce(x);
const ss = spawnSync("ss", ["-tmnpH", "state", "established"], { encoding: "utf8" });
if (ss.status !== 0) throw new Error(`ss failed: ${ss.stderr || ss.error}`);
// Each socket takes two lines: its addresses and owner, then its skmem.
const lines = ss.stdout.split("\n");
const sockets: { rb: number; tb: number }[] = [];
for (let i = 0; i + 1 < lines.length; i++) {
  if (!lines[i]!.includes(`pid=${process.pid},`)) continue;
  const m = /rb(\d+),t\d+,tb(\d+)/.exec(lines[i + 1]!);
  if (m) sockets.push({ rb: Number(m[1]), tb: Number(m[2]) });
}
// Report only once every rank has looked, so that no peer's exit closes a socket being counted.
dist.barrier();
console.log(`RESULT ${JSON.stringify({ sum: x[0], sockets })}`);
await dist.destroyProcessGroup();
