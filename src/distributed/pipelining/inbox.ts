import { clone } from "../../ops/creation.js";
import type { Tensor } from "../../tensor/tensor.js";
import { irecv } from "../point_to_point.js";
import type { Work } from "../work.js";
import type { Action } from "./schedule_orders.js";
import { tagged } from "./trace.js";
import { ACTIVATION, GRADIENT, HEADER, decodeShape, headerBuffer, type PipelineStage } from "./stage.js";

type Kind = "header" | "activation" | "gradient";

/** One message this rank will receive from a peer, in the order the peer sends it. */
interface Slot {
  kind: Kind;
  /** The boundary crossed: after stage `boundary`. */
  boundary: number;
  mb: number;
  work?: Work;
  value?: Tensor | Int32Array;
}

/** Everything one peer sends this rank during a step, in its order, and how far receives are posted. */
interface Stream {
  peer: number;
  slots: Slot[];
  at: Map<string, number>;
  cursor: number;
}

const keyOf = (kind: Kind, boundary: number, mb: number) => `${kind}:${boundary}:${mb}`;

/**
 * The receiving side of one step. Messages between two ranks arrive in the order they were sent,
 * so the receives from each peer must be posted in that order; every rank knows every rank's order
 * (the schedule is a pure function of rank, ranks and micro-batches, as in PyTorch), so the inbox
 * lists what each peer will send it and posts the receives ahead, in that order, as far as it can
 * without blocking: an activation's receive needs its header (the size) to have arrived, a
 * gradient's needs the activation it answers to have been sent (its shape). Transfers so overlap
 * compute; a wait happens only when the schedule needs the message.
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
          slots.push({ kind: "header", boundary: a.stage, mb: a.mb }, { kind: "activation", boundary: a.stage, mb: a.mb });
        } else if (a.kind === "B" && a.stage > 0 && (a.stage - 1) % p === me) {
          slots.push({ kind: "gradient", boundary: a.stage - 1, mb: a.mb });
        }
      }
      if (slots.length === 0) continue;
      const stream: Stream = { peer: group.ranks[q]!, slots, at: new Map(slots.map((s, i) => [keyOf(s.kind, s.boundary, s.mb), i])), cursor: 0 };
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
    for (const s of this.streams) this.advance(s, -1);
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
    const index = stream.at.get(key)!;
    this.advance(stream, index);
    const slot = stream.slots[index]!;
    slot.work!.wait();
    const buffer = slot.value as Tensor;
    slot.value = undefined;
    const value = clone(buffer);
    this.receiverOf(slot).buffers.release(buffer);
    return value;
  }

  private receiverOf(slot: Slot): PipelineStage {
    return this.stages.get(slot.kind === "gradient" ? slot.boundary : slot.boundary + 1)!;
  }

  /** Posts the stream's receives in order, waiting for headers only up to slot `until`. */
  private advance(s: Stream, until: number): void {
    while (s.cursor < s.slots.length) {
      const slot = s.slots[s.cursor]!;
      const receiver = this.receiverOf(slot);
      let value: Tensor | Int32Array;
      if (slot.kind === "header") value = headerBuffer();
      else if (slot.kind === "activation") {
        const header = s.slots[s.cursor - 1]!;
        // test(), not isCompleted(): a header that arrived while this thread computed is only
        // known once its report is taken in, and the activation's receive should go out now.
        if (!header.work!.test() && s.cursor > until) return;
        header.work!.wait();
        const shape = decodeShape(header.value as Int32Array)!;
        header.value = undefined;
        receiver.checkIncoming(shape);
        value = receiver.buffers.take(shape);
      } else {
        const shape = this.sentShapes.get(slot.boundary)?.get(slot.mb);
        if (!shape) {
          if (s.cursor > until) return;
          throw new Error(`internal: the gradient of micro-batch ${slot.mb} across boundary ${slot.boundary} is awaited before its activation was sent`);
        }
        value = receiver.buffers.take(shape);
      }
      const kind = slot.kind === "header" ? HEADER : slot.kind === "activation" ? ACTIVATION : GRADIENT;
      const peer = s.peer;
      slot.work = tagged(slot.kind, slot.mb, slot.boundary, () => irecv(value, peer, receiver.p2p(slot.boundary, kind)));
      slot.value = value;
      s.cursor++;
    }
  }
}
