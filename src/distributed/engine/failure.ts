import { TransferStatus } from "../native.js";
import { TransferError } from "./link.js";
import { KIND_CODE, type OpMessage, type RequestKind } from "./messages.js";

const KIND_BY_CODE = new Map<number, RequestKind>(
  (Object.entries(KIND_CODE) as [RequestKind, number][]).filter(([k]) => k !== "recv").map(([k, c]) => [c, k]),
);

export function describeOp(msg: OpMessage): string {
  const req = msg.req;
  if (req.kind === "send" || req.kind === "recv") {
    return `${req.kind} ${req.kind === "send" ? "to" : "from"} rank ${req.peer} (tag ${req.tag})`;
  }
  return `${req.kind} #${msg.seq}${msg.group === 0 ? "" : ` in group ${msg.group}`}`;
}

/** Turns the native layer's account of a failed transfer into a sentence about the job. */
export function explainTransferError(err: unknown, msg: OpMessage): string {
  if (!(err instanceof TransferError)) return (err as Error).message ?? String(err);
  if (err.status === TransferStatus.Aborted) return "the process group was shut down while it ran";
  if (err.status === TransferStatus.Timeout) return err.detail.replace(/^timed out /, `timed out after ${msg.timeoutMs} ms `);
  if (err.status !== TransferStatus.Mismatch) return err.detail;
  const m = /rank (\d+) sent tag (\d+) code (\d+) bytes (\d+); this rank expected tag (\d+) code (\d+) bytes (\d+)/.exec(err.detail);
  if (!m) return err.detail;
  const [, peer, tag, code, bytes, myTag, myCode, myBytes] = m.map(Number) as number[];
  const theirKind = KIND_BY_CODE.get(code! & 0xff) ?? "an unknown operation";
  const p2p = msg.req.kind === "send" || msg.req.kind === "recv";
  if (p2p) {
    if (code !== myCode) return `rank ${peer} sent data for its ${theirKind} #${tag} while this rank waited in recv`;
    if (tag !== myTag) return `rank ${peer} sent with tag ${tag}, but this recv expects tag ${myTag}`;
    return `rank ${peer} sent ${bytes} bytes, but this recv expects ${myBytes}: the tensors differ in size or dtype`;
  }
  if ((code! & 0xff) !== (myCode! & 0xff) || (code! >>> 8) !== (myCode! >>> 8)) {
    return `rank ${peer} is running ${theirKind} #${tag}${code! >>> 8 ? ` in group ${code! >>> 8}` : ""} while this rank runs ${describeOp(msg)}: the ranks call different collectives`;
  }
  if (tag !== myTag) {
    return `rank ${peer} is at collective #${tag} while this rank is at #${myTag}: a rank skipped or added a collective`;
  }
  return (
    `rank ${peer} sent ${bytes} bytes where this rank expected ${myBytes}: the ranks passed tensors of different sizes or dtypes ` +
    "(run with RINGTORCH_DISTRIBUTED_DEBUG=DETAIL to see which)"
  );
}
