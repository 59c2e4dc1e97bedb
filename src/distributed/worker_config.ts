import type { CommEnv } from "./env.js";
import type { WorkerConfig } from "./engine/messages.js";

/**
 * The communication worker's settings: where the store is and who this rank is, and the
 * transport knobs of the environment (env.ts). Shared by the default backend's join and by the
 * mpi backend's shared-memory all-reduce (mpi/local_shm.ts), so that both honour the same knobs.
 */
export function workerConfig(
  cenv: CommEnv,
  at: { rank: number; world: number; token: string; storeHost: string; storePort: number; prefix: string; timeoutMs: number },
): WorkerConfig {
  return {
    ...at,
    transport: cenv.transport,
    listenHost: cenv.socketAddr ?? null,
    tcpStreams: cenv.tcpStreams,
    stripeBytes: cenv.stripeBytes,
    tcpBufferBytes: cenv.tcpBufferBytes,
    slotBytes: cenv.slotBytes,
    slots: cenv.slots,
    spinUs: cenv.spinUs,
    streamingBytes: cenv.streamingBytes,
    pipelineBytes: cenv.pipelineBytes,
    algorithm: cenv.algorithm,
  };
}
