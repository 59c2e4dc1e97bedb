import type { Work } from "./work.js";
import { currentWorld } from "./init.js";
import type { ProcessGroup } from "./process_group.js";
import { finishersOf } from "./options.js";
import { checkOptions } from "../util/options.js";
import { type CommTensor, resolve } from "./tensor_ref.js";

export interface P2POptions {
  /** Only used to check that the peer is a member; peers are global ranks, as in torch. */
  group?: ProcessGroup;
  /** A send matches the receive with the same tag (in order, per pair of ranks). */
  tag?: number;
  timeoutMs?: number;
}

function checkPeer(where: string, peer: number, opts: P2POptions | undefined): ProcessGroup {
  checkOptions(where, opts, ["group", "tag", "timeoutMs"]);
  const { world } = currentWorld(where);
  if (!Number.isInteger(peer) || peer < 0 || peer >= world.size) throw new Error(`${where}: peer rank must be in 0..${world.size - 1}, got ${peer}`);
  if (peer === world.rank) throw new Error(`${where}: rank ${peer} cannot exchange data with itself`);
  opts?.group?.groupRankOf(peer, where);
  return world;
}

function tagOf(where: string, opts: P2POptions | undefined): number {
  const tag = opts?.tag ?? 0;
  if (!Number.isInteger(tag) || tag < 0 || tag > 0xffffffff) throw new Error(`${where}: tag must be an integer in 0..2^32-1, got ${tag}`);
  return tag;
}

/** Sends `tensor` to global rank `dst` and returns when it has been handed over. */
export function send(tensor: CommTensor, dst: number, opts?: P2POptions): void {
  isend(tensor, dst, opts).wait();
}

/** Receives into `tensor` from global rank `src`; returns `src`. */
export function recv(tensor: CommTensor, src: number, opts?: P2POptions): number {
  irecv(tensor, src, opts).wait();
  return src;
}

export function isend(tensor: CommTensor, dst: number, opts?: P2POptions): Work {
  const world = checkPeer("isend", dst, opts);
  const t = resolve(tensor, "isend", false);
  return world.run({ kind: "send", buf: t.ref, peer: dst, tag: tagOf("isend", opts) }, t.dtype, { async: true, timeoutMs: opts?.timeoutMs }, "", [])!;
}

export function irecv(tensor: CommTensor, src: number, opts?: P2POptions): Work {
  const world = checkPeer("irecv", src, opts);
  const t = resolve(tensor, "irecv", true);
  return world.run({ kind: "recv", buf: t.ref, peer: src, tag: tagOf("irecv", opts) }, t.dtype, { async: true, timeoutMs: opts?.timeoutMs }, "", finishersOf([t]))!;
}

/** One operation for batchIsendIrecv (torch.distributed.P2POp). */
export interface P2POp {
  op: "isend" | "irecv";
  tensor: CommTensor;
  peer: number;
  tag?: number;
  group?: ProcessGroup;
}

/** Starts all the operations at once; sends and receives between the same ranks cannot block each other. */
export function batchIsendIrecv(ops: P2POp[]): Work[] {
  return ops.map((o) => (o.op === "isend" ? isend : irecv)(o.tensor, o.peer, { tag: o.tag, group: o.group }));
}
