import { DTYPE_BYTES, DTYPE_CODE, type CommDType } from "../dtypes.js";
import type { CommNative } from "../native.js";
import { NATIVE_OP, type ReduceOpName } from "../reduce_op.js";
import { allGatherDoubling, allGatherRing, allGatherTree } from "./algorithms/allgather.js";
import { allReduceHalvingDoubling, allReduceRing, allReduceTree } from "./algorithms/allreduce.js";
import { broadcastChain, broadcastTree } from "./algorithms/broadcast.js";
import { allToAllDirect, barrierDissemination, gatherDirect, scatterDirect } from "./algorithms/direct.js";
import { reduceRing, reduceTree } from "./algorithms/reduce.js";
import { reduceScatterHalving, reduceScatterRing, reduceScatterTree } from "./algorithms/reduce_scatter.js";
import { type GroupContext, Scratch } from "./context.js";
import { checkAgreement } from "./agreement.js";
import { openGate, passGate } from "./gate.js";
import { Link } from "./link.js";
import { type AddressRef, type Algorithm, type BufRef, DEBUG_CODE, KIND_CODE, type OpMessage, type Request, type RequestKind } from "./messages.js";
import { type Piece, totalBytes } from "./piece.js";
import { chooseAlgorithm } from "./select.js";

/** Runs collectives for the comm worker: picks the algorithm, converts bfloat16, divides for AVG. */
export class Executor {
  readonly link: Link;
  /** The algorithm the last collective ran ("direct" where a collective has only one), for the trace. */
  lastAlgorithm: Algorithm | "direct" = "direct";
  private readonly groups = new Map<number, readonly number[]>();
  private readonly scratch = new Scratch();

  constructor(
    private readonly native: CommNative,
    handle: number,
    readonly rank: number,
    world: number,
    private readonly pipelineBytes: number,
    private readonly forced: Algorithm | null,
  ) {
    this.link = new Link(native, handle);
    this.groups.set(0, Array.from({ length: world }, (_, i) => i));
  }

  addGroup(id: number, ranks: number[]): void {
    this.groups.set(id, ranks);
  }

  groupRanks(id: number): readonly number[] {
    const ranks = this.groups.get(id);
    if (!ranks) throw new Error(`internal: unknown process group ${id}`);
    return ranks;
  }

  /** Runs one collective to completion; throws TransferError when a peer fails it. */
  run(msg: OpMessage): void {
    if (!msg.gate) return this.runUngated(msg);
    passGate(msg.gate, performance.now() + msg.timeoutMs, msg.timeoutMs);
    this.runUngated(msg);
    openGate(msg.gate);
  }

  private runUngated(msg: OpMessage): void {
    const ranks = this.groupRanks(msg.group);
    const req = msg.req;
    const link = this.link;
    link.clear();
    link.tag = msg.seq;
    link.deadline = performance.now() + msg.timeoutMs;
    this.scratch.reset();
    const ctx = this.context(ranks, msg.dtype, "sum");
    if (msg.debug !== null) {
      link.code = ((msg.group & 0xffffff) << 8) | DEBUG_CODE;
      checkAgreement(ctx, msg.debug, msg.seq);
    }
    link.code = ((msg.group & 0xffffff) << 8) | KIND_CODE[req.kind];
    const reduces = req.kind === "allReduce" || req.kind === "reduce" || req.kind === "reduceScatter";
    const lowPrecision = req.kind === "allReduce" && req.lowPrecision === true;
    if (reduces && msg.dtype === "bfloat16" && !lowPrecision) return this.runInFloat32(ranks, msg, req);
    if (req.kind === "allReduce") return this.dispatch(this.context(ranks, msg.dtype, req.op, averageDivisor(req, ranks.length)), req, msg.algorithm);
    this.dispatch(this.context(ranks, msg.dtype, reduces ? req.op : "sum"), req, msg.algorithm);
    if (reduces && req.op === "avg") this.divideResult(req, msg.dtype, ctx.rank, ranks.length);
  }

  private context(ranks: readonly number[], dtype: CommDType, op: ReduceOpName, divisor = 1): GroupContext {
    return {
      link: this.link,
      size: ranks.length,
      rank: ranks.indexOf(this.rank),
      ranks,
      dtype: DTYPE_CODE[dtype],
      op: NATIVE_OP[op],
      elem: DTYPE_BYTES[dtype],
      scratch: this.scratch,
      divisor,
      pipelineBytes: this.pipelineBytes,
    };
  }

  private dispatch(ctx: GroupContext, req: Request, forcedHere: Algorithm | null): void {
    const e = ctx.elem;
    const pc = (b: BufRef | AddressRef): Piece =>
      "address" in b ? { buf: null, byteOffset: b.address, bytes: b.numel * e } : { buf: b.data, byteOffset: b.offset * e, bytes: b.numel * e };
    const forced = forcedHere ?? this.forced;
    const pick = (kind: RequestKind, bytes: number) => (this.lastAlgorithm = chooseAlgorithm(kind, bytes, forced));
    this.lastAlgorithm = "direct";
    switch (req.kind) {
      case "allReduce": {
        const data = req.bufs.map(pc);
        const algo = pick("allReduce", totalBytes(data));
        if (algo === "ring") return allReduceRing(ctx, data);
        if (algo === "rhd") return allReduceHalvingDoubling(ctx, data);
        return allReduceTree(ctx, data);
      }
      case "broadcast": {
        const data = pc(req.buf);
        if (pick("broadcast", data.bytes) === "ring") return broadcastChain(ctx, data, req.root);
        return broadcastTree(ctx, [data], req.root);
      }
      case "reduce": {
        const data = pc(req.buf);
        if (pick("reduce", data.bytes) === "ring") return reduceRing(ctx, data, req.root);
        return reduceTree(ctx, data, req.root);
      }
      case "allGather": {
        const outputs = req.outputs.map(pc);
        const algo = pick("allGather", totalBytes(outputs));
        if (algo === "ring") return allGatherRing(ctx, pc(req.input), outputs);
        if (algo === "rhd") return allGatherDoubling(ctx, pc(req.input), outputs);
        return allGatherTree(ctx, pc(req.input), outputs);
      }
      case "reduceScatter": {
        const inputs = req.inputs.map(pc);
        const algo = pick("reduceScatter", totalBytes(inputs));
        if (algo === "ring") return reduceScatterRing(ctx, inputs, pc(req.output));
        if (algo === "rhd") return reduceScatterHalving(ctx, inputs, pc(req.output));
        return reduceScatterTree(ctx, inputs, pc(req.output));
      }
      case "scatter":
        return scatterDirect(ctx, req.inputs ? req.inputs.map(pc) : null, pc(req.output), req.root);
      case "gather":
        return gatherDirect(ctx, pc(req.input), req.outputs ? req.outputs.map(pc) : null, req.root);
      case "allToAll":
        return allToAllDirect(ctx, req.inputs.map(pc), req.outputs.map(pc));
      case "barrier":
        return barrierDissemination(ctx);
      default:
        throw new Error(`internal: ${req.kind} is not a collective`);
    }
  }

  /** bfloat16 reductions run on float32 copies and round once at the end. */
  private runInFloat32(ranks: readonly number[], msg: OpMessage, req: Extract<Request, { op: ReduceOpName }>): void {
    const n = this.native;
    const f32 = (numel: number): BufRef => {
      const bytes = this.scratch.take(numel * 4);
      return { data: new Float32Array(bytes.buffer, bytes.byteOffset, numel), offset: 0, numel };
    };
    const toF32 = (b: BufRef): BufRef => {
      const f = f32(b.numel);
      n.bf16ToF32(b.data as Uint16Array, b.offset, f.data as Float32Array, 0, b.numel);
      return f;
    };
    const back = (f: BufRef, b: BufRef, at = 0) => n.f32ToBf16(f.data as Float32Array, at, b.data as Uint16Array, b.offset, b.numel);
    const avg = req.op === "avg";
    if (req.kind === "allReduce") {
      // The parts travel as one float32 buffer, so a coalesced all-reduce stays one message.
      // CommClient never sends widening reductions by address: their parts are read here.
      const bufs = req.bufs as BufRef[];
      const f = f32(bufs.reduce((s, b) => s + b.numel, 0));
      let at = 0;
      for (const b of bufs) {
        n.bf16ToF32(b.data as Uint16Array, b.offset, f.data as Float32Array, at, b.numel);
        at += b.numel;
      }
      this.dispatch(this.context(ranks, "float32", req.op, averageDivisor(req, ranks.length)), { ...req, bufs: [f] }, msg.algorithm);
      at = 0;
      for (const b of bufs) {
        back(f, b, at);
        at += b.numel;
      }
      return;
    }
    const ctx = this.context(ranks, "float32", req.op);
    if (req.kind === "reduceScatter") {
      const out = f32(req.output.numel);
      const f32req = { ...req, inputs: req.inputs.map(toF32), output: out };
      this.dispatch(ctx, f32req, msg.algorithm);
      if (avg) n.divideBy(DTYPE_CODE.float32, out.data, 0, out.numel, ranks.length);
      return back(out, req.output);
    }
    const f = toF32(req.buf);
    this.dispatch(ctx, { ...req, buf: f }, msg.algorithm);
    if (req.kind === "reduce" && ctx.rank !== req.root) return;
    if (avg) n.divideBy(DTYPE_CODE.float32, f.data, 0, f.numel, ranks.length);
    back(f, req.buf);
  }

  /** AVG of reduce and reduceScatter divides after the collective (an all-reduce divides inside it). */
  private divideResult(req: Request, dtype: CommDType, groupRank: number, size: number): void {
    const div = (b: BufRef) => this.native.divideBy(DTYPE_CODE[dtype], b.data, b.offset * DTYPE_BYTES[dtype], b.numel, size);
    if (req.kind === "reduce" && req.root === groupRank) div(req.buf);
    else if (req.kind === "reduceScatter") div(req.output);
  }

  /** Releases scratch buffers over 64 MB, so that one huge bfloat16 reduction does not pin its memory. */
  trimScratch(): void {
    this.scratch.trim(64 << 20);
  }
}

/** What an all-reduce divides its sum by: 1 unless AVG (the group size, or the caller's divisor). */
function averageDivisor(req: Extract<Request, { kind: "allReduce" }>, size: number): number {
  return req.op === "avg" ? (req.divisor ?? size) : 1;
}
