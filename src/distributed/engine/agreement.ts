import type { GroupContext } from "./context.js";
import { allGatherRing } from "./algorithms/allgather.js";

/** Room for one rank's description of its call; longer descriptions are cut (and compared cut). */
const DESCRIPTION_BYTES = 512;

/** Raised on every rank when RINGTORCH_DISTRIBUTED_DEBUG=DETAIL finds ranks calling different things. */
export class CollectiveMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CollectiveMismatchError";
  }
}

/**
 * RINGTORCH_DISTRIBUTED_DEBUG=DETAIL: before the collective itself, the group all-gathers a
 * fixed-size description of what each rank called (collective, dtype, shapes, root, op). The
 * exchange has the same size on every rank whatever they called, so it cannot itself desynchronise;
 * every rank then sees every description and reports the same first difference.
 */
export function checkAgreement(ctx: GroupContext, description: string, seq: number): void {
  const mine = new Uint8Array(DESCRIPTION_BYTES);
  const encoded = new TextEncoder().encode(description);
  mine.set(encoded.subarray(0, DESCRIPTION_BYTES));
  const all = new Uint8Array(DESCRIPTION_BYTES * ctx.size);
  const outputs = Array.from({ length: ctx.size }, (_, i) => ({ buf: all, byteOffset: i * DESCRIPTION_BYTES, bytes: DESCRIPTION_BYTES }));
  allGatherRing(ctx, { buf: mine, byteOffset: 0, bytes: DESCRIPTION_BYTES }, outputs);
  const decode = (i: number) => {
    const b = all.subarray(i * DESCRIPTION_BYTES, (i + 1) * DESCRIPTION_BYTES);
    const end = b.indexOf(0);
    return new TextDecoder().decode(end < 0 ? b : b.subarray(0, end));
  };
  const first = decode(0);
  for (let i = 1; i < ctx.size; i++) {
    const other = decode(i);
    if (other !== first) {
      throw new CollectiveMismatchError(
        `RINGTORCH_DISTRIBUTED_DEBUG=DETAIL found ranks disagreeing on collective #${seq}: ` +
          `rank ${ctx.ranks[0]} called ${first}, but rank ${ctx.ranks[i]} called ${other}. ` +
          "Every rank of the group must call the same collectives in the same order with the same shapes and dtypes.",
      );
    }
  }
}
