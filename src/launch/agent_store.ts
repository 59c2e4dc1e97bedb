import { lookup } from "node:dns/promises";
import { networkInterfaces } from "node:os";
import type { Store } from "../distributed/store/store.js";
import { TCPStore, TCPStoreServer } from "../distributed/store/tcp_store.js";
import type { LaunchConfig } from "./launch_config.js";

/** The job's store as one ringrun sees it: a client always, and the server too on the node that hosts it. */
export interface AgentStore {
  readonly store: Store;
  readonly server: TCPStoreServer | undefined;
  /** Where workers connect: MASTER_ADDR and MASTER_PORT. */
  readonly host: string;
  readonly port: number;
}

export class LaunchError extends Error {
  override readonly name = "LaunchError";
}

/**
 * Hosts the store where this node is the one to host it (--standalone; node 0 of a static job;
 * for c10d the node whose interface has the endpoint's address, first come), and connects to it.
 * It listens only on the address it was given.
 */
export async function openAgentStore(config: LaunchConfig): Promise<AgentStore> {
  let server: TCPStoreServer | undefined;
  const host = config.storeHost;
  const listen = (): Promise<TCPStoreServer> => TCPStoreServer.listen({ host, port: config.storePort, token: config.token });
  try {
    if (config.standalone || (config.backend === "static" && config.nodeRank === 0)) {
      server = await listen();
    } else if (config.backend === "c10d" && (await isLocalAddress(host))) {
      try {
        server = await listen();
      } catch (error) {
        // Another ringrun on this machine got there first; join it as a client.
        if (!/already in use/.test((error as Error).message)) throw error;
      }
    }
  } catch (error) {
    const message = (error as Error).message;
    const hint = !config.standalone && /already in use/.test(message) ? " (--standalone runs a single-node job on a free port)" : "";
    throw new LaunchError(`${message}${hint}`);
  }
  const port = server?.port ?? config.storePort;
  try {
    const store = await TCPStore.connect({ host, port, token: config.token, timeoutMs: config.rendezvous.joinTimeoutMs });
    return { store, server, host, port };
  } catch (error) {
    await server?.close();
    throw new LaunchError(`rendezvous failed: ${(error as Error).message}`);
  }
}

async function isLocalAddress(host: string): Promise<boolean> {
  const local = new Set(["localhost"]);
  for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) local.add(a.address);
  if (local.has(host)) return true;
  try {
    const resolved = await lookup(host, { all: true });
    return resolved.some((r) => local.has(r.address));
  } catch {
    return false;
  }
}
