import { DTYPE_BYTES, DTYPE_CODE, type CommDType } from "./dtypes.js";
import type { BufRef, Request } from "./engine/messages.js";
import { loadCommNative } from "./native.js";

function copy(dst: BufRef, src: BufRef, dtype: CommDType): void {
  const e = DTYPE_BYTES[dtype];
  const to = new Uint8Array(dst.data.buffer, dst.data.byteOffset + dst.offset * e, dst.numel * e);
  to.set(new Uint8Array(src.data.buffer, src.data.byteOffset + src.offset * e, src.numel * e));
}

/**
 * A collective over a group of one process: reductions over one rank are the identity (AVG
 * divides by one, or by the caller's divisor), and every gather or scatter is a copy.
 */
export function runLocally(req: Request, dtype: CommDType): void {
  switch (req.kind) {
    case "allReduce":
      if (req.op === "avg" && req.divisor !== undefined && req.divisor !== 1) {
        const e = DTYPE_BYTES[dtype];
        // Addresses replace buffers only on the way to the comm worker.
        for (const b of req.bufs as BufRef[]) loadCommNative().divideBy(DTYPE_CODE[dtype], b.data, b.offset * e, b.numel, req.divisor);
      }
      return;
    case "allGather":
      return copy(req.outputs[0]!, req.input, dtype);
    case "reduceScatter":
      return copy(req.output, req.inputs[0]!, dtype);
    case "scatter":
      return copy(req.output, req.inputs![0]!, dtype);
    case "gather":
      return copy(req.outputs![0]!, req.input, dtype);
    case "allToAll":
      return copy(req.outputs[0]!, req.inputs[0]!, dtype);
    case "send":
    case "recv":
      throw new Error(`${req.kind}: a process cannot ${req.kind === "send" ? "send to" : "receive from"} itself (peer ${req.peer})`);
    default:
      return;
  }
}
