import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { CommNative } from "../native.js";

/**
 * Mutual proof of the job token on a new transport connection, without sending the token:
 *   connector → acceptor: "RTC1", from rank, to rank, nonce C      (28 bytes)
 *   acceptor → connector: nonce A, HMAC(token, "accept" C from to)  (48 bytes)
 *   connector → acceptor: HMAC(token, "connect" A from to)          (32 bytes)
 *   acceptor → connector: 1                                         (accepted)
 * An acceptor that is refused closes the connection and says why in its log; the connector
 * learns only that it was refused.
 */
const MAGIC = 0x31435452; // "RTC1"

function mac(token: string, label: string, nonce: Uint8Array, from: number, to: number): Buffer {
  return createHmac("sha256", token).update(label).update(nonce).update(`${from}>${to}`).digest();
}

function io(native: CommNative, fd: number, data: Uint8Array, writing: boolean, timeoutMs: number, what: string): void {
  const err = native.sockTransfer(fd, data, writing, timeoutMs);
  if (err) throw new Error(`${what}: ${err}`);
}

export function connectHandshake(native: CommNative, fd: number, token: string, from: number, to: number, timeoutMs: number): void {
  const hello = Buffer.alloc(28);
  hello.writeUInt32LE(MAGIC, 0);
  hello.writeUInt32LE(from, 4);
  hello.writeUInt32LE(to, 8);
  const nonceC = randomBytes(16);
  nonceC.copy(hello, 12);
  io(native, fd, hello, true, timeoutMs, `handshake with rank ${to}`);
  const reply = Buffer.alloc(48);
  io(native, fd, reply, false, timeoutMs, `handshake with rank ${to} (it may have refused this rank's token)`);
  if (!timingSafeEqual(reply.subarray(16), mac(token, "accept", nonceC, from, to))) {
    throw new Error(`the process listening for rank ${to} could not prove it holds the job token`);
  }
  io(native, fd, mac(token, "connect", reply.subarray(0, 16), from, to), true, timeoutMs, `handshake with rank ${to}`);
  const ack = Buffer.alloc(1);
  io(native, fd, ack, false, timeoutMs, `rank ${to} refused this rank's token`);
}

/** Returns the connecting rank, or throws with the reason to log (the caller closes the fd). */
export function acceptHandshake(native: CommNative, fd: number, token: string, me: number, expected: Set<number>, timeoutMs: number): number {
  const hello = Buffer.alloc(28);
  io(native, fd, hello, false, timeoutMs, "reading a hello");
  const from = hello.readUInt32LE(4);
  if (hello.readUInt32LE(0) !== MAGIC || hello.readUInt32LE(8) !== me || !expected.has(from)) {
    throw new Error("it did not introduce itself as an expected rank of this job");
  }
  const nonceA = randomBytes(16);
  io(native, fd, Buffer.concat([nonceA, mac(token, "accept", hello.subarray(12, 28), from, me)]), true, timeoutMs, "answering a hello");
  const proof = Buffer.alloc(32);
  io(native, fd, proof, false, timeoutMs, "reading a token proof");
  if (!timingSafeEqual(proof, mac(token, "connect", nonceA, from, me))) {
    throw new Error(`it claimed to be rank ${from} but does not hold the job token`);
  }
  io(native, fd, Buffer.from([1]), true, timeoutMs, "acknowledging");
  return from;
}
