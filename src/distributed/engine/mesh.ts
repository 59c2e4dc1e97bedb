import { hostname } from "node:os";
import type { CommNative } from "../native.js";
import { bytesToString, type Store } from "../store/store.js";
import { RefusalLog } from "../store/refusal_log.js";
import { connectHandshake, connectionKey, PendingHandshakes, UnprovenListenerError } from "./handshake.js";
import { hostIdentity } from "./host_id.js";
import type { WorkerConfig } from "./messages.js";
import { type HostInfo, PeerLiveness } from "./peer_liveness.js";
import { removeStaleSegments, segmentName } from "./shm_names.js";

export type TransportKind = "self" | "shm" | "tcp";

export interface Mesh {
  handle: number;
  transports: TransportKind[];
}

interface AddressInfo {
  shm: string;
  host: string;
  port: number;
  /** TCP connections this rank opens to each TCP peer (RINGTORCH_TCP_STREAMS). */
  streams: number;
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
 *    sides proving the job token (handshake.ts) on every one of the pair's `tcpStreams`
 *    connections. Accepted connections are handshaken all at once and dropped after a second of
 *    silence; a connector whose attempt was dropped tries again.
 * A same-machine peer that exits meanwhile is reported at once (peer_liveness.ts), not waited for.
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
  const handle = native.create(rank, world, cfg.slotBytes, cfg.slots, cfg.spinUs, cfg.streamingBytes, cfg.stripeBytes);
  const deadline = Date.now() + cfg.timeoutMs;
  const left = () => Math.max(1, deadline - Date.now());
  let linkedName = "";
  let listenFd = -1;
  try {
    const me: HostInfo = { host: hostIdentity(), hostname: hostname(), pid: process.pid };
    const liveness = new PeerLiveness(rank, me.host);
    await store.set(`mesh/${rank}/host`, JSON.stringify(me));
    const hosts = await getAll<HostInfo>(store, world, "host", deadline, liveness);
    liveness.know(hosts);
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
    const streams = cfg.tcpStreams;
    const mine: AddressInfo = { shm: shmName, host: listenHost, port, streams };
    await store.set(`mesh/${rank}/addr`, JSON.stringify(mine));
    const addrs = await getAll<AddressInfo>(store, world, "addr", deadline, liveness);
    // Both ends cut a message by the stream count, so a pair must agree on it.
    const odd = tcpPeers.find((r) => addrs[r]!.streams !== streams);
    if (odd !== undefined) {
      throw new Error(
        `rank ${rank} opens ${streams} TCP stream(s) per peer (RINGTORCH_TCP_STREAMS), but rank ${odd} opens ${addrs[odd]!.streams}; ` +
          "set the same RINGTORCH_TCP_STREAMS for every rank.",
      );
    }

    if (shmPeers.length > 0) {
      for (const r of shmPeers) native.attachShmPeer(handle, r, addrs[r]!.shm, hosts[r]!.pid);
      await store.set(`mesh/${rank}/mapped`, "1");
      await liveness.waitForKeys(store, shmPeers.map((r) => `mesh/${r}/mapped`), shmPeers, deadline, "its peers to map shared memory");
      native.shmUnlink(shmName);
      linkedName = "";
      onSegment(shmName, false);
    }

    for (const r of tcpPeers.filter((r) => r < rank)) {
      for (let s = 0; s < streams; s++) native.attachTcpPeer(handle, r, joinPeer(native, cfg, addrs[r]!, r, s, deadline, liveness), s);
    }
    const expected = new Set(tcpPeers.filter((r) => r > rank).flatMap((r) => Array.from({ length: streams }, (_, s) => connectionKey(r, s))));
    const refusals = new RefusalLog((m) => log(`refused a transport connection on ${listenHost}:${port}: ${m}`));
    const handshakes = new PendingHandshakes(native, cfg.token, rank, expected, (reason) => refusals.refused(reason));
    try {
      while (expected.size > 0) {
        if (Date.now() >= deadline) {
          throw new Error(
            `rank ${rank} timed out after ${cfg.timeoutMs} ms waiting for rank(s) ${waitingRanks(expected).join(", ")} to connect ` +
              `to ${listenHost}:${port}. Check that they can reach that address (RINGTORCH_SOCKET_ADDR picks it).`,
          );
        }
        liveness.check(waitingRanks(expected), "it to connect");
        const fds = Int32Array.from([listenFd, ...handshakes.fds]);
        const ready = new Uint8Array(fds.length);
        const waitMs = Math.max(0, Math.min(200, left(), handshakes.nextExpiry - Date.now()));
        const polled = native.sockPoll(fds, ready, waitMs);
        if (typeof polled === "string") throw new Error(`rank ${rank} failed to wait for connections: ${polled}`);
        for (let i = 1; i < fds.length; i++) {
          if (!ready[i]) continue;
          const proven = handshakes.progress(fds[i]!);
          if (proven === undefined) continue;
          native.attachTcpPeer(handle, proven.from, fds[i]!, proven.stream);
          expected.delete(connectionKey(proven.from, proven.stream));
        }
        if (ready[0]) {
          const fd = native.tcpAccept(listenFd, 0, cfg.tcpBufferBytes);
          if (typeof fd === "string") throw new Error(`rank ${rank} failed to accept a connection: ${fd}`);
          if (fd >= 0) handshakes.add(fd);
        }
        handshakes.expire();
      }
    } finally {
      handshakes.closeAll();
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

/** The ranks with a connection still to come, from connectionKey()s. */
function waitingRanks(expected: Set<string>): number[] {
  return [...new Set([...expected].map((k) => Number(k.split("#")[0])))];
}

function ranksOf(transports: TransportKind[], kind: TransportKind): number[] {
  return transports.flatMap((t, r) => (t === kind ? [r] : []));
}

async function getAll<T>(store: Store, world: number, what: string, deadline: number, liveness: PeerLiveness): Promise<T[]> {
  const ranks = Array.from({ length: world }, (_, r) => r);
  const keys = ranks.map((r) => `mesh/${r}/${what}`);
  // Host information carries the pid: learn each as it comes, to notice a peer that exits early.
  const learn =
    what === "host"
      ? async (present: number[]) => {
          for (const r of present) {
            if (!liveness.knows(r)) liveness.learn(r, JSON.parse(bytesToString(await store.get(keys[r]!, 1000))) as HostInfo);
          }
        }
      : undefined;
  try {
    await liveness.waitForKeys(store, keys, ranks, deadline, `the other ranks' "${what}"`, learn);
  } catch (err) {
    const missing: number[] = [];
    for (const r of ranks) if (!(await store.check([keys[r]!]).catch(() => false))) missing.push(r);
    if (missing.length === 0 || /exited while/.test((err as Error).message)) throw err;
    throw new Error(`rank(s) ${missing.join(", ")} did not join the process group in time (no "${what}" from them): ${(err as Error).message}`);
  }
  const values = await Promise.all(keys.map((k) => store.get(k, Math.max(1, deadline - Date.now()))));
  return values.map((v) => JSON.parse(bytesToString(v)) as T);
}

/**
 * Connects to a lower-ranked peer and proves the token, trying again while the connection is
 * refused or dropped (the peer may be busy, or may have dropped a slow attempt), until the
 * deadline; a listener that cannot prove the token, or a peer that exited, ends it at once.
 */
function joinPeer(native: CommNative, cfg: WorkerConfig, addr: AddressInfo, peer: number, stream: number, deadline: number, liveness: PeerLiveness): number {
  const { token, rank, tcpBufferBytes } = cfg;
  let last = "";
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    liveness.check([peer], "it to accept a connection");
    const fd = native.tcpConnect(addr.host, addr.port, Math.max(1, Math.min(2000, deadline - Date.now())), tcpBufferBytes);
    if (typeof fd === "number") {
      try {
        connectHandshake(native, fd, token, rank, peer, stream, Math.max(1, Math.min(deadline - Date.now(), 30_000)));
        return fd;
      } catch (err) {
        native.closeFd(fd);
        if (err instanceof UnprovenListenerError) throw new Error(`rank ${rank} could not join rank ${peer} at ${addr.host}:${addr.port}: ${err.message}`);
        last = (err as Error).message;
      }
    } else {
      last = fd;
    }
    if (Date.now() + delay >= deadline) break;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delay);
  }
  throw new Error(`rank ${rank} could not join rank ${peer} at ${addr.host}:${addr.port}: ${last}`);
}
