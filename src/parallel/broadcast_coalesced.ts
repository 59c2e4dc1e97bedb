import { noGrad } from "../autograd/grad_mode.js";
import { cat } from "../ops/join.js";
import type { Tensor } from "../tensor/tensor.js";

/** What broadcastCoalesced needs of a process group (DDP's and FSDP's comms both have it). */
export interface Broadcaster {
  readonly worldSize: number;
  broadcast(buffer: Tensor, src: number): void;
}

/** Broadcasts tensors as one flat buffer per dtype (one collective instead of one per tensor). */
export function broadcastCoalesced(comm: Broadcaster, tensors: readonly Tensor[], root: number): void {
  if (comm.worldSize === 1 || tensors.length === 0) return;
  const byDtype = new Map<string, Tensor[]>();
  for (const t of tensors) {
    const list = byDtype.get(t.dtype) ?? [];
    list.push(t);
    byDtype.set(t.dtype, list);
  }
  noGrad(() => {
    for (const group of byDtype.values()) {
      const flat = cat(group.map((t) => t.detach().reshape(-1)), 0);
      comm.broadcast(flat, root);
      let offset = 0;
      for (const t of group) {
        t.copy_(flat.narrow(0, offset, t.numel).view(t.shape));
        offset += t.numel;
      }
    }
  });
}

