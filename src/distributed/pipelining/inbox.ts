import { clone } from "../../ops/creation.js";
import type { Tensor } from "../../tensor/tensor.js";
import { irecv } from "../point_to_point.js";
import type { Work } from "../work.js";
import type { Action } from "./schedule_orders.js";
import { frameBody, frameNumel, readFrameShape } from "./activation_frame.js";
import { tagged } from "./trace.js";
import { ACTIVATION, GRADIENT, HEADER, decodeShape, headerBuffer, type PipelineStage, sameShape } from "./stage.js";

type Kind = "header" | "activation" | "gradient";

/** One message this rank will receive from a peer, in the order the peer sends it. */
interface Slot {
  kind: Kind;
  /** The boundary crossed: after stage `boundary`. */
  boundary: number;
  mb: number;
  work?: Work;
  value?: Tensor | Int32Array;
  /** An activation's shape: from its header message, or (guess) the one its micro-batch had last step. */
  shape?: readonly number[];
  /** The shape this micro-batch had last step, when it had one: the activation comes without a header message, in a frame of that size. */
  guess?: readonly number[];
  /** An activation's receive posted at its guess and not yet read: its frame confirms the shape, or names the real one. */
  predicted?: boolean;
  /** A receive posted at a predicted shape that proved wrong: the sender filled it with a placeholder, and this slot's message follows it. */
  discard?: Slot;
}

/** Everything one peer sends this rank during a step, in its order, and how far receives are posted. */
interface Stream {
  peer: number;
  slots: Slot[];
  at: Map<string, Slot>;
  cursor: number;
}

const keyOf = (kind: Kind, boundary: number, mb: number) => `${kind}:${boundary}:${mb}`;

/**
 * The receiving side of one step. Messages between two ranks arrive in the order they were sent,
 * so the receives from each peer must be posted in that order; every rank knows every rank's order
 * (the schedule is a pure function of rank, ranks and micro-batches, as in PyTorch), so the inbox
 * lists what each peer will send it and posts the receives ahead, in that order, as far as it can
 * without blocking: an activation's receive needs its size, from its header message in the first
 * step, from then on the size its micro-batch had the step before (its frame confirms it: no
 * header message, activation_frame.ts); a gradient's
 * needs the activation it answers to have been sent (its shape). Transfers so overlap compute; a
 * wait happens only when the schedule needs the message.
 */
export class Inbox {
  private readonly streams: Stream[] = [];
  private readonly streamOf = new Map<string, Stream>();
  private readonly sentShapes = new Map<number, Map<number, readonly number[]>>();

  /** `orders[r]` is group rank r's order; `stages` maps this rank's stage indices to its stages. */
  constructor(
    private readonly stages: ReadonlyMap<number, PipelineStage>,
    orders: readonly (readonly Action[])[],
  ) {
    const any = stages.values().next().value as PipelineStage;
    const { group, numStages } = any;
    const p = group.size;
    const me = group.rank;
    for (let q = 0; q < p; q++) {
      if (q === me) continue;
      const slots: Slot[] = [];
      for (const a of orders[q]!) {
        if (a.kind === "F" && a.stage < numStages - 1 && (a.stage + 1) % p === me) {
          // The sender keeps the same record of last step's shapes (PipelineStage.sentShapes), so both know whether a header message comes.
          const guess = stages.get(a.stage + 1)!.receivedShapes.get(a.mb);
          if (!guess) slots.push({ kind: "header", boundary: a.stage, mb: a.mb });
          slots.push({ kind: "activation", boundary: a.stage, mb: a.mb, guess });
        } else if (a.kind === "B" && a.stage > 0 && (a.stage - 1) % p === me) {
          slots.push({ kind: "gradient", boundary: a.stage - 1, mb: a.mb });
        }
      }
      if (slots.length === 0) continue;
      const stream: Stream = { peer: group.ranks[q]!, slots, at: new Map(slots.map((s) => [keyOf(s.kind, s.boundary, s.mb), s])), cursor: 0 };
      this.streams.push(stream);
      for (const s of slots) this.streamOf.set(keyOf(s.kind, s.boundary, s.mb), stream);
    }
    this.pump();
  }

  /** Records the shape of an activation this rank sent: the gradient that comes back has it. */
  sent(boundary: number, mb: number, shape: readonly number[]): void {
    let byMb = this.sentShapes.get(boundary);
    if (!byMb) this.sentShapes.set(boundary, (byMb = new Map()));
    byMb.set(mb, shape);
  }

  /** Posts every receive that can be posted now without waiting. */
  pump(): void {
    for (const s of this.streams) this.advance(s, null);
  }

  /** Micro-batch `mb`'s input to stage `boundary + 1`, as a leaf that collects its gradient. */
  activation(boundary: number, mb: number): Tensor {
    return (this.take("activation", boundary, mb) as Tensor).requiresGrad_(true);
  }

  /** d(loss)/d(output of stage `boundary`) for micro-batch `mb`. */
  gradient(boundary: number, mb: number): Tensor {
    return this.take("gradient", boundary, mb) as Tensor;
  }

  /** Waits for the message and copies it out of the stage's reused buffer (message_buffers.ts). */
  private take(kind: Kind, boundary: number, mb: number): Tensor | Int32Array {
    const key = keyOf(kind, boundary, mb);
    const stream = this.streamOf.get(key);
    if (!stream) throw new Error(`internal: no peer of this rank sends the ${kind} of micro-batch ${mb} across boundary ${boundary} in this schedule`);
    this.advance(stream, stream.at.get(key)!);
    // A predicted receive is confirmed by its frame; a wrong guess puts the real slot in its place.
    const slot = this.confirm(stream, stream.at.get(key)!);
    const receiver = this.receiverOf(slot);
    if (slot.discard) {
      receiver.buffers.release(slot.discard.value as Tensor);
      slot.discard = undefined;
    }
    slot.work!.wait();
    const buffer = slot.value as Tensor;
    slot.value = undefined;
    const value = clone(kind === "activation" ? frameBody(buffer, slot.shape!) : buffer);
    receiver.buffers.release(buffer);
    return value;
  }

  /**
   * Waits for an activation whose receive was posted at its guessed shape, reads the shape its
   * frame announces, and returns the slot the activation is in: the same one when the guess was
   * right, else a new slot, posted now at the announced shape, right after the placeholder.
   */
  private confirm(s: Stream, slot: Slot): Slot {
    if (!slot.predicted) return slot;
    slot.predicted = false;
    slot.work!.wait();
    const shape = this.accept(readFrameShape(slot.value as Tensor), slot);
    if (sameShape(shape, slot.shape!)) return slot;
    const real: Slot = { kind: "activation", boundary: slot.boundary, mb: slot.mb, discard: slot };
    const index = s.slots.indexOf(slot);
    s.slots.splice(index + 1, 0, real);
    s.at.set(keyOf(real.kind, real.boundary, real.mb), real);
    // The cursor stops right after a predicted slot (advance), so nothing was posted behind it.
    this.post(s, real, shape);
    s.cursor++;
    return real;
  }

  /** An activation's announced shape, checked against what the stage takes; remembered as next step's guess. */
  private accept(shape: readonly number[], activation: Slot): readonly number[] {
    const receiver = this.receiverOf(activation);
    receiver.checkIncoming(shape);
    receiver.receivedShapes.set(activation.mb, shape);
    return shape;
  }

  /** The shape an activation's header message announces (waiting for it). */
  private readHeader(header: Slot, activation: Slot): readonly number[] {
    header.work!.wait();
    const shape = decodeShape(header.value as Int32Array)!;
    header.value = undefined;
    return this.accept(shape, activation);
  }

  private post(s: Stream, slot: Slot, shape: readonly number[] | null): void {
    const receiver = this.receiverOf(slot);
    // An activation arrives in a frame (its shape, then its values), a gradient as its values alone.
    const value = !shape ? headerBuffer() : slot.kind === "activation" ? receiver.buffers.take([frameNumel(shape, "float32")]) : receiver.buffers.take(shape);
    slot.shape = shape ?? undefined;
    const kind = slot.kind === "header" ? HEADER : slot.kind === "activation" ? ACTIVATION : GRADIENT;
    const peer = s.peer;
    slot.work = tagged(slot.kind, slot.mb, slot.boundary, () => irecv(value, peer, receiver.p2p(slot.boundary, kind)));
    slot.value = value;
  }

  private receiverOf(slot: Slot): PipelineStage {
    return this.stages.get(slot.kind === "gradient" ? slot.boundary : slot.boundary + 1)!;
  }

  /**
   * Posts the stream's receives in order, waiting for header messages only until slot `until` is
   * posted. An activation whose micro-batch had a shape last step is posted at that shape; the
   * stream then stops there until its frame is in and read (confirm), since a wrong guess puts
   * one more message in the stream right after it.
   */
  private advance(s: Stream, until: Slot | null): void {
    // A slot, not an index: a wrong guess inserts a slot and moves those after it.
    const mayStop = () => until === null || until.work !== undefined;
    while (s.cursor < s.slots.length) {
      const slot = s.slots[s.cursor]!;
      const before = s.slots[s.cursor - 1];
      if (before?.predicted) {
        // test(), not isCompleted(): a frame that arrived while this thread computed is only known once its report is taken in.
        if (!before.work!.test() && mayStop()) return;
        this.confirm(s, before);
        continue;
      }
      if (slot.kind === "header") this.post(s, slot, null);
      else if (slot.kind === "activation") {
        if (slot.guess) {
          this.post(s, slot, slot.guess);
          slot.predicted = true;
        } else {
          const header = before!;
          if (!header.work!.test() && mayStop()) return;
          this.post(s, slot, this.readHeader(header, slot));
        }
      } else {
        const shape = this.sentShapes.get(slot.boundary)?.get(slot.mb);
        if (!shape) {
          if (mayStop()) return;
          throw new Error(`internal: the gradient of micro-batch ${slot.mb} across boundary ${slot.boundary} is awaited before its activation was sent`);
        }
        this.post(s, slot, shape);
      }
      s.cursor++;
    }
  }
}
