import { allReduce } from "../distributed/collectives.js";
import type { ProcessGroup } from "../distributed/process_group.js";
import { getWorldSize } from "../distributed/init.js";
import { noGrad } from "../autograd/grad_mode.js";
import { to } from "../ops/creation.js";
import type { CommHookFuture, GradBucket } from "./reducer.js";

/**
 * DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks.default_hooks). The state
 * is the process group to reduce over, or null for the default group:
 *
 *   ddp.registerCommHook(null, commHooks.bf16CompressHook);
 */
function sizeOf(group: ProcessGroup | null): number {
  return group ? group.worldSize : getWorldSize();
}

/** The built-in behaviour as a hook: average by dividing, then an in-place SUM all-reduce. */
export function allreduceHook(group: ProcessGroup | null, bucket: GradBucket): CommHookFuture {
  const buffer = bucket.buffer();
  noGrad(() => buffer.div_(sizeOf(group)));
  const work = allReduce(buffer, { ...(group ? { group } : {}), async: true });
  return {
    wait: () => {
      work.wait();
      return buffer;
    },
  };
}

/**
 * Halves the bytes on the wire: the averaged gradients travel and are summed as bfloat16, then
 * widen back to the bucket's dtype. bfloat16 keeps float32's range, so unlike float16 it needs
 * no loss scaling; it keeps 8 bits of mantissa.
 */
export function bf16CompressHook(group: ProcessGroup | null, bucket: GradBucket): CommHookFuture {
  const buffer = bucket.buffer();
  const compressed = noGrad(() => to(buffer.div(sizeOf(group)), "bfloat16"));
  const work = allReduce(compressed, { ...(group ? { group } : {}), async: true, lowPrecision: true });
  return {
    wait: () => {
      work.wait();
      return to(compressed, buffer.dtype);
    },
  };
}
