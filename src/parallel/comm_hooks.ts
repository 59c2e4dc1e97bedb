import { allReduce } from "../distributed/collectives.js";
import type { ProcessGroup } from "../distributed/process_group.js";
import { getWorldSize } from "../distributed/init.js";
import { noGrad } from "../autograd/grad_mode.js";
import { empty, to } from "../ops/creation.js";
import { loadCommNative } from "../distributed/native.js";
import { denseData } from "../tensor/tensor.js";
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

/** The built-in behaviour as a hook: an in-place all-reduce that averages over the group. */
export function allreduceHook(group: ProcessGroup | null, bucket: GradBucket): CommHookFuture {
  const buffer = bucket.buffer();
  const work = allReduce(buffer, { ...(group ? { group } : {}), op: "avg", async: true });
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

/**
 * PyTorch's fp16_compress_hook: the averaged gradients travel and are summed as IEEE float16 (half
 * the bytes of float32, 3 more bits of mantissa than bfloat16, but a range that ends at 65504, so
 * very large gradients become infinite), then widen back into a float32 tensor.
 */
export function fp16CompressHook(group: ProcessGroup | null, bucket: GradBucket): CommHookFuture {
  const buffer = bucket.buffer();
  if (buffer.dtype !== "float32") throw new TypeError(`fp16CompressHook: expects float32 gradients, got a ${buffer.dtype} bucket`);
  const native = loadCommNative();
  const n = buffer.numel;
  const scaled = noGrad(() => buffer.div(sizeOf(group)));
  const half = new Uint16Array(new SharedArrayBuffer(n * 2));
  native.f32ToF16(denseData(scaled) as Float32Array, 0, half, 0, n);
  const work = allReduce(half, { ...(group ? { group } : {}), async: true, float16: true });
  return {
    wait: () => {
      work.wait();
      const out = empty([n]);
      native.f16ToF32(half, 0, denseData(out) as Float32Array, 0, n);
      return out;
    },
  };
}
