// A rank joined through INIT_METHOD (env:// or tcp://host:port) with rank and world size passed
// explicitly when MY_RANK is set, for init.test.ts. Reports the addresses this process listens on.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import * as dist from "../../../src/distributed/index.js";

const explicit = process.env.MY_RANK !== undefined ? { rank: Number(process.env.MY_RANK), worldSize: Number(process.env.MY_WORLD) } : {};
await dist.initProcessGroup({ initMethod: process.env.INIT_METHOD, timeoutMs: 20_000, ...explicit });
const x = new Int32Array(new SharedArrayBuffer(8)).fill(dist.getRank() + 1);
dist.allReduce(x, { op: dist.ReduceOp.PRODUCT });
const listening = listeningAddresses();
console.log(`RESULT ${JSON.stringify({ rank: dist.getRank(), world: dist.getWorldSize(), product: Array.from(x), listening })}`);
await dist.destroyProcessGroup();

/** IPv4 addresses of this process's sockets in LISTEN state (from /proc/net/tcp). */
function listeningAddresses(): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // The fd closed meanwhile.
    }
  }
  const out: string[] = [];
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== "0A" || !inodes.has(f[9]!)) continue;
    const [hexIp] = f[1]!.split(":");
    out.push(Array.from({ length: 4 }, (_, i) => parseInt(hexIp!.slice(6 - 2 * i, 8 - 2 * i), 16)).join("."));
  }
  return out;
}
