import type { CommNative } from "../native.js";
import { NONCE_BYTES, PROOF_BYTES, newNonce, proofMatches, tokenProof } from "../store/proof.js";

/**
 * Mutual proof of the job token on a new transport connection, without sending the token
 * (the proofs are the store login's, store/proof.ts, with their own role labels). A pair of ranks
 * has one connection per TCP stream, and each proves the token on its own:
 *   connector → acceptor: "RTC3", from rank, to rank, stream, nonce C               (32 bytes)
 *   acceptor → connector: nonce A, HMAC(token, ACCEPTOR, C, A, "from>to#stream")    (48 bytes)
 *   connector → acceptor: HMAC(token, CONNECTOR, C, A, "from>to#stream")            (32 bytes)
 *   acceptor → connector: 1                                                         (accepted)
 * The acceptor proves itself first, so a connector never answers a process that does not hold
 * the token. An acceptor that refuses closes the connection and says why in its log; the
 * connector learns only that it was refused.
 */
const MAGIC = 0x33435452; // "RTC3"
const HELLO_BYTES = 16 + NONCE_BYTES;
const ACCEPTOR = "ringtorch transport: acceptor";
const CONNECTOR = "ringtorch transport: connector";

/** The listener did not prove it holds the token: not a peer of this job, and retrying cannot help. */
export class UnprovenListenerError extends Error {}

function io(native: CommNative, fd: number, data: Uint8Array, writing: boolean, timeoutMs: number, what: string): void {
  const err = native.sockTransfer(fd, data, writing, timeoutMs);
  if (err) throw new Error(`${what}: ${err}`);
}

/**
 * The connector's side. Throws UnprovenListenerError when the listener fails its proof, any
 * other error when the connection failed or was refused (the caller may try again).
 */
export function connectHandshake(native: CommNative, fd: number, token: string, from: number, to: number, stream: number, timeoutMs: number): void {
  const hello = Buffer.alloc(HELLO_BYTES);
  hello.writeUInt32LE(MAGIC, 0);
  hello.writeUInt32LE(from, 4);
  hello.writeUInt32LE(to, 8);
  hello.writeUInt32LE(stream, 12);
  const nonceC = newNonce();
  nonceC.copy(hello, 16);
  const label = `${from}>${to}#${stream}`;
  io(native, fd, hello, true, timeoutMs, `handshake with rank ${to}`);
  const reply = Buffer.alloc(NONCE_BYTES + PROOF_BYTES);
  io(native, fd, reply, false, timeoutMs, `handshake with rank ${to} (it dropped the connection or did not answer)`);
  const nonceA = reply.subarray(0, NONCE_BYTES);
  if (!proofMatches(reply.subarray(NONCE_BYTES), tokenProof(token, ACCEPTOR, nonceC, nonceA, label))) {
    throw new UnprovenListenerError(`the process listening for rank ${to} could not prove it holds the job token`);
  }
  io(native, fd, tokenProof(token, CONNECTOR, nonceC, nonceA, label), true, timeoutMs, `handshake with rank ${to}`);
  const ack = Buffer.alloc(1);
  io(native, fd, ack, false, timeoutMs, `rank ${to} did not accept this rank's proof`);
}

interface Pending {
  fd: number;
  /** Bytes of the message being read, and how many have come. */
  buf: Buffer;
  got: number;
  from: number;
  stream: number;
  nonces: Buffer[];
  /** A peer silent past `silentAt`, or still at it past `giveUpAt`, is dropped. */
  silentAt: number;
  giveUpAt: number;
}

/** The key of a connection in PendingHandshakes' `expected`. */
export function connectionKey(rank: number, stream: number): string {
  return `${rank}#${stream}`;
}

/** A connection that proved itself: from which rank, as which of its streams. */
export interface Proven {
  from: number;
  stream: number;
}

/**
 * The acceptor's side, for many connections at once: a connection that is silent, slow or
 * hostile holds up nobody but itself. The caller polls `fds` and calls `progress` for each fd
 * that can be read; `expire` drops connections silent for `silentMs`. At most `maxPending` are
 * kept (the oldest is dropped for a newer one).
 */
export class PendingHandshakes {
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly native: CommNative,
    private readonly token: string,
    private readonly me: number,
    /** connectionKey(rank, stream) of each connection still to come. */
    private readonly expected: Set<string>,
    private readonly refuse: (reason: string) => void,
    private readonly silentMs = 1000,
    private readonly maxPending = 32,
  ) {}

  get fds(): number[] {
    return [...this.pending.keys()];
  }

  /** When the next pending connection falls silent (Infinity when none). */
  get nextExpiry(): number {
    let t = Infinity;
    for (const p of this.pending.values()) t = Math.min(t, p.silentAt, p.giveUpAt);
    return t;
  }

  add(fd: number): void {
    if (this.pending.size >= this.maxPending) this.drop(this.pending.keys().next().value!, `${this.maxPending} connections were already handshaking; the oldest is dropped`);
    const now = Date.now();
    this.pending.set(fd, { fd, buf: Buffer.alloc(HELLO_BYTES), got: 0, from: -1, stream: -1, nonces: [], silentAt: now + this.silentMs, giveUpAt: now + 5 * this.silentMs });
  }

  /** Reads what `fd` has sent; returns the peer's rank and stream once it has proven itself (the fd is then the caller's). */
  progress(fd: number): Proven | undefined {
    const p = this.pending.get(fd);
    if (!p) return undefined;
    const n = this.native.sockReadSome(fd, p.buf, p.got);
    if (n < 0) return this.drop(fd, "it closed the connection during the handshake");
    p.got += n;
    p.silentAt = Date.now() + this.silentMs;
    if (p.got < p.buf.length) return undefined;
    try {
      if (p.from < 0) {
        this.answerHello(p);
        return undefined;
      }
      if (!proofMatches(p.buf, tokenProof(this.token, CONNECTOR, p.nonces[0]!, p.nonces[1]!, `${p.from}>${this.me}#${p.stream}`))) {
        throw new Error(`it claimed to be rank ${p.from} but does not hold the job token`);
      }
      if (!this.expected.has(connectionKey(p.from, p.stream))) throw new Error(`rank ${p.from}'s stream ${p.stream} is already connected`);
      io(this.native, fd, Buffer.from([1]), true, this.silentMs, "acknowledging");
    } catch (err) {
      return this.drop(fd, (err as Error).message);
    }
    this.pending.delete(fd);
    return { from: p.from, stream: p.stream };
  }

  /** Drops every connection silent for too long. */
  expire(now = Date.now()): void {
    for (const p of [...this.pending.values()]) {
      if (now >= p.silentAt || now >= p.giveUpAt) this.drop(p.fd, `it did not complete the handshake (silent for ${this.silentMs} ms, or slower than ${5 * this.silentMs} ms)`);
    }
  }

  closeAll(): void {
    for (const fd of this.pending.keys()) this.native.closeFd(fd);
    this.pending.clear();
  }

  private answerHello(p: Pending): void {
    const from = p.buf.readUInt32LE(4);
    const stream = p.buf.readUInt32LE(12);
    if (p.buf.readUInt32LE(0) !== MAGIC || p.buf.readUInt32LE(8) !== this.me || !this.expected.has(connectionKey(from, stream))) {
      throw new Error("it did not introduce itself as an expected rank and stream of this job");
    }
    const nonceC = Buffer.from(p.buf.subarray(16, HELLO_BYTES));
    const nonceA = newNonce();
    io(this.native, p.fd, Buffer.concat([nonceA, tokenProof(this.token, ACCEPTOR, nonceC, nonceA, `${from}>${this.me}#${stream}`)]), true, this.silentMs, "answering a hello");
    p.from = from;
    p.stream = stream;
    p.nonces = [nonceC, nonceA];
    p.buf = Buffer.alloc(PROOF_BYTES);
    p.got = 0;
  }

  private drop(fd: number, reason: string): undefined {
    this.pending.delete(fd);
    this.native.closeFd(fd);
    this.refuse(reason);
    return undefined;
  }
}
