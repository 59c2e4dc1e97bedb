import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type OpMessage, p2pFromWire, p2pWire } from "../../src/distributed/engine/messages.js";

// What CommClient posts for a send or receive by address must come out in the worker as the
// OpMessage it stands for (the wire form only drops what a point-to-point operation never has).
const op = (req: OpMessage["req"], dtype: OpMessage["dtype"] = "float32"): Omit<OpMessage, "id" | "type"> => ({
  group: 3, seq: 0, dtype, timeoutMs: 1800000, algorithm: null, debug: null, req,
});

describe("point-to-point wire form", () => {
  it("gives back the same send and receive, peer 0 and large addresses included", () => {
    // An address above 2^32 and a tag at 2^32 - 1: numbers, not 32-bit fields.
    const address = 0x7f12_3456_7000;
    const cases: Extract<OpMessage["req"], { kind: "send" | "recv" }>[] = [
      { kind: "send", buf: { address, numel: 16384 }, peer: 1, tag: 0xffffffff },
      { kind: "recv", buf: { address: address + 64, numel: 0 }, peer: 0, tag: 5 },
      { kind: "send", buf: { address, numel: 7 }, peer: 0, tag: 0 },
      { kind: "recv", buf: { address, numel: 9 }, peer: 12, tag: 2 },
    ];
    for (const [i, req] of cases.entries()) {
      for (const dtype of ["float32", "bfloat16", "float64", "uint8"] as const) {
        const msg = op(req, dtype);
        const wire = p2pWire(40 + i, msg);
        assert.ok(wire, `${req.kind} to/from ${req.peer} has a wire form`);
        assert.deepEqual(p2pFromWire(wire), { type: "op", id: 40 + i, ...msg });
      }
    }
  });

  it("leaves to the full message what it cannot carry: a typed array, a trace tag, a collective", () => {
    const data = new Float32Array(new SharedArrayBuffer(16));
    assert.equal(p2pWire(1, op({ kind: "send", buf: { data, offset: 0, numel: 4 }, peer: 1, tag: 0 })), null);
    const traced = { ...op({ kind: "recv", buf: { address: 4096, numel: 4 }, peer: 1, tag: 0 }), trace: { pipeline: { what: "activation" as const, mb: 0, boundary: 0 } } };
    assert.equal(p2pWire(2, traced), null);
    assert.equal(p2pWire(3, op({ kind: "allReduce", bufs: [{ address: 4096, numel: 4 }], op: "sum" })), null);
  });
});
