import { empty } from "../../ops/creation.js";
import type { DType } from "../../tensor/dtype.js";
import type { Tensor } from "../../tensor/tensor.js";
import type { Work } from "../work.js";

/**
 * The buffers one stage's messages travel in, kept and reused across micro-batches and steps.
 * A tensor handed to isend/irecv reaches the communication thread as a SharedArrayBuffer, and its
 * memory returns to the pool only once that thread too has collected its handle, which it does
 * after tens of megabytes of buffers new to it (engine/seen_buffers.ts). Sending each activation
 * and gradient where it lies, and receiving into fresh tensors, so kept every message of a step
 * alive well past its backward: 1F1B on the last stage held m micro-batches' inputs and gradients
 * instead of one. Through these buffers the thread sees the same few buffers every step, and the
 * activations themselves stay on this thread, freed with their backward; the price is a copy of
 * each message (an activation or gradient, beside the stage's matrix products). Buffers are kept
 * per shape for the stage's life: as many as were in flight at once, times the few shapes a
 * training run's micro-batches take (a last, smaller batch adds its own).
 */
export class MessageBuffers {
  private readonly free = new Map<string, Tensor[]>();
  private readonly sending: { work: Work; buffer: Tensor }[] = [];
  private readonly made: Tensor[] = [];

  /** A buffer of this shape and dtype for a receive; give it back with release() once read. */
  take(shape: readonly number[], dtype: DType = "float32"): Tensor {
    const reused = this.free.get(keyOf(shape, dtype))?.pop();
    if (reused) return reused;
    const fresh = empty(shape, { dtype });
    this.made.push(fresh);
    return fresh;
  }

  /**
   * Every buffer made so far, oldest first (all of them are kept for the stage's life anyway). How
   * many are in flight at once, and so how many a step makes, depends on how far ahead the receives
   * could be posted, which timing decides: a memory reading that must see no message or activation
   * left behind counts the buffers a step made apart (test/distributed/pipeline_memory.test.ts).
   */
  madeSoFar(): readonly Tensor[] {
    return this.made;
  }

  release(buffer: Tensor): void {
    const key = keyOf(buffer.shape, buffer.dtype);
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    list.push(buffer);
  }

  /** Copies `t` into a buffer and sends that with `post`; the buffer is reused once the send is done (reclaim). */
  send(t: Tensor, post: (buffer: Tensor) => Work): Work {
    const buffer = this.take(t.shape, t.dtype);
    buffer.copy_(t.detach());
    return this.sent(post(buffer), buffer);
  }

  /** A buffer from take() being sent by `work`: it is reused once the send is done (reclaim). */
  sent(work: Work, buffer: Tensor): Work {
    this.sending.push({ work, buffer });
    return work;
  }

  /** Takes back the buffers of the sends that have finished. */
  reclaim(): void {
    let kept = 0;
    for (const s of this.sending) {
      if (s.work.isCompleted()) this.release(s.buffer);
      else this.sending[kept++] = s;
    }
    this.sending.length = kept;
  }
}

const keyOf = (shape: readonly number[], dtype: DType) => `${dtype}:${shape.join(",")}`;
