import { hostname } from "node:os";
import type { CommNative } from "../native.js";
import { bytesToString, type Store } from "../store/store.js";
import { acceptHandshake, connectHandshake } from "./handshake.js";
import { hostIdentity } from "./host_id.js";
import type { WorkerConfig } from "./messages.js";
import { removeStaleSegments, segmentName } from "./shm_names.js";

export type TransportKind = "self" | "shm" | "tcp";

export interface Mesh {
  handle: number;
  transports: TransportKind[];
}

interface HostInfo {
  host: string;
  hostname: string;
  pid: number;
}

interface AddressInfo {
  shm: string;
  host: string;
  port: number;
}

/**
 * Connects this rank to every other rank of the job, through the store:
 * 1. each rank publishes where it runs; peers with the same host identity use shared memory,
 *    the others TCP (RINGTORCH_TRANSPORT=tcp forces TCP everywhere);
 * 2. each rank creates its receive segment and/or listens on its one interface, and publishes
 *    the segment name and address;
 * 3. ranks map their same-host peers' segments; once all of them say so, each owner unlinks its
 *    segment (nothing is left in /dev/shm from then on, whatever happens to the processes);
 * 4. each rank connects to its lower-ranked TCP peers and accepts the higher-ranked ones, both
 *    sides proving the job token (handshake.ts).
 */
export async function buildMesh(
  native: CommNative,
  cfg: WorkerConfig,
  listenHost: string,
  store: Store,
  onSegment: (name: string, linked: boolean) => void,
  log: (message: string) => void,
): Promise<Mesh> {
  const { rank, world } = cfg;
  const handle = native.create(rank, world, cfg.slotBytes, cfg.slots, cfg.spinUs, cfg.streamingBytes);
  const deadline = Date.now() + cfg.timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  let linkedName = "";
  let listenFd = -1;
  try {
    const me: HostInfo = { host: hostIdentity(), hostname: hostname(), pid: process.pid };
    await store.set(`mesh/${rank}/host`, JSON.stringify(me));
    const hosts = await getAll<HostInfo>(store, world, "host", left);
    const transports: TransportKind[] = hosts.map((h, r) =>
      r === rank ? "self" : cfg.transport !== "tcp" && h.host === me.host ? "shm" : "tcp",
    );
    const shmPeers = ranksOf(transports, "shm");
    const tcpPeers = ranksOf(transports, "tcp");
    if (cfg.transport === "shm" && tcpPeers.length > 0) {
      const r = tcpPeers[0]!;
      throw new Error(
        `RINGTORCH_TRANSPORT=shm asks for shared memory between all ranks, but rank ${r} runs on ${hosts[r]!.hostname}, ` +
          `which does not share memory with rank ${rank} on ${me.hostname}.`,
      );
    }
    let shmName = "";
    if (shmPeers.length > 0) {
      removeStaleSegments();
      shmName = segmentName(rank);
      onSegment(shmName, true);
      linkedName = shmName;
      native.createSegment(handle, shmName);
    }
    let port = 0;
    if (tcpPeers.length > 0) {
      [listenFd, port] = native.tcpListen(listenHost, 0);
    }
    const mine: AddressInfo = { shm: shmName, host: listenHost, port };
    await store.set(`mesh/${rank}/addr`, JSON.stringify(mine));
    const addrs = await getAll<AddressInfo>(store, world, "addr", left);

    if (shmPeers.length > 0) {
      for (const r of shmPeers) native.attachShmPeer(handle, r, addrs[r]!.shm, hosts[r]!.pid);
      await store.set(`mesh/${rank}/mapped`, "1");
      await store.wait(
        shmPeers.map((r) => `mesh/${r}/mapped`),
        left(),
      );
      native.shmUnlink(shmName);
      linkedName = "";
      onSegment(shmName, false);
    }

    for (const r of tcpPeers.filter((r) => r < rank)) {
      const fd = connectWithRetry(native, addrs[r]!, r, rank, deadline);
      try {
        connectHandshake(native, fd, cfg.token, rank, r, Math.min(left(), 30_000));
      } catch (err) {
        native.closeFd(fd);
        throw new Error(`rank ${rank} could not join rank ${r} at ${addrs[r]!.host}:${addrs[r]!.port}: ${(err as Error).message}`);
      }
      native.attachTcpPeer(handle, r, fd);
    }
    const expected = new Set(tcpPeers.filter((r) => r > rank));
    while (expected.size > 0) {
      if (Date.now() >= deadline) {
        throw new Error(
          `rank ${rank} timed out after ${cfg.timeoutMs} ms waiting for rank(s) ${[...expected].join(", ")} to connect ` +
            `to ${listenHost}:${port}. Check that they can reach that address (RINGTORCH_SOCKET_ADDR picks it).`,
        );
      }
      const fd = native.tcpAccept(listenFd, Math.min(200, left()));
      if (typeof fd === "string") throw new Error(`rank ${rank} failed to accept a connection: ${fd}`);
      if (fd < 0) continue;
      try {
        const from = acceptHandshake(native, fd, cfg.token, rank, expected, 10_000);
        native.attachTcpPeer(handle, from, fd);
        expected.delete(from);
      } catch (err) {
        log(`refused a transport connection on ${listenHost}:${port}: ${(err as Error).message}`);
        native.closeFd(fd);
      }
    }
    return { handle, transports };
  } catch (err) {
    native.destroy(handle);
    if (linkedName) {
      native.shmUnlink(linkedName);
      onSegment(linkedName, false);
    }
    throw err;
  } finally {
    if (listenFd >= 0) native.closeFd(listenFd);
  }
}

function ranksOf(transports: TransportKind[], kind: TransportKind): number[] {
  return transports.flatMap((t, r) => (t === kind ? [r] : []));
}

async function getAll<T>(store: Store, world: number, what: string, left: () => number): Promise<T[]> {
  const values = await Promise.all(
    Array.from({ length: world }, (_, r) =>
      store.get(`mesh/${r}/${what}`, left()).catch((err: Error) => {
        throw new Error(`rank ${r} did not join the process group in time (no "${what}" from it): ${err.message}`);
      }),
    ),
  );
  return values.map((v) => JSON.parse(bytesToString(v)) as T);
}

function connectWithRetry(native: CommNative, addr: AddressInfo, peerRank: number, rank: number, deadline: number): number {
  let last = "";
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    const fd = native.tcpConnect(addr.host, addr.port, Math.max(1, Math.min(2000, deadline - Date.now())));
    if (typeof fd === "number") return fd;
    last = fd;
    if (Date.now() + delay >= deadline) break;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delay);
  }
  throw new Error(`rank ${rank} could not connect to rank ${peerRank} at ${addr.host}:${addr.port}: ${last}`);
}
