import type { CommClient } from "../comm_client.js";
import type { OpMessage } from "../engine/messages.js";
import type { OpClient } from "../process_group.js";
import type { Work } from "../work.js";
import type { MpiClient } from "./mpi_client.js";

/**
 * The mpi backend's operations when every rank is on one host (mpi/local_shm.ts): all-reduces
 * (the bulk of DDP's and most training's traffic) on ringtorch's shared-memory transport, every
 * other operation on MPI. Each side runs its own operations in the order this rank posts them,
 * which is the same order on every rank, so each side matches up on its own.
 */
export class SplitClient implements OpClient {
  constructor(
    private readonly mpi: MpiClient,
    private readonly shm: CommClient,
  ) {}

  submit(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work {
    return this.side(msg).submit(msg, description, onSettle);
  }

  runBlocking(msg: Omit<OpMessage, "id" | "type">, description: string, onSettle: (() => void) | null): Work {
    return this.side(msg).runBlocking(msg, description, onSettle);
  }

  private side(msg: Omit<OpMessage, "id" | "type">): OpClient {
    return msg.req.kind === "allReduce" ? this.shm : this.mpi;
  }
}
