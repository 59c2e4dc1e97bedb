/**
 * The TCP store's wire format. Every message is a frame: a little-endian u32 payload length, then
 * the payload. A request payload is `[u8 command][u32 request id][arguments]`; a response payload
 * is `[u8 status][u32 request id][body]`. Byte strings are `[u32 length][bytes]`.
 *
 * A connection starts with the login, a mutual proof of the job token that never sends it
 * (proof.ts computes the proofs):
 *   client → server: HELLO   [bytes nonce C]                  (16 random bytes)
 *   server → client: Ok      [bytes nonce S][bytes proof S]   HMAC(token, SERVER_PROOF, C, S)
 *   client → server: PROVE   [bytes proof C]                  HMAC(token, CLIENT_PROOF, C, S)
 *   server → client: Ok
 * The client checks the server's proof before it sends anything that depends on the token: a
 * process squatting on the store's port learns nothing but a random nonce, and the client stops
 * (StoreAuthError). The server answers nothing but HELLO until the client's proof checks out,
 * and drops a connection that deviates without a word.
 */
export const enum Command {
  Hello = 1,
  Set = 2,
  Get = 3,
  Add = 4,
  CompareSet = 5,
  Wait = 6,
  Check = 7,
  Delete = 8,
  NumKeys = 9,
  /** SET without an answer: for frequent, fire-and-forget progress marks. */
  SetQuiet = 10,
  /** The client's half of the login (see above). */
  Prove = 11,
}

/** Role labels of the login's proofs: a server's proof never passes as a client's. */
export const SERVER_PROOF = "ringtorch store login: server";
export const CLIENT_PROOF = "ringtorch store login: client";

export const enum Status {
  Ok = 0,
  Timeout = 1,
  Error = 2,
}

/** Login frames are tiny; anything larger before the login is complete is refused unread (both ways). */
export const MAX_UNAUTHENTICATED_FRAME = 4096;
export const MAX_FRAME = 1 << 30;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class FrameWriter {
  private parts: Buffer[] = [];
  private length = 0;

  u8(v: number): this {
    const b = Buffer.allocUnsafe(1);
    b.writeUInt8(v);
    return this.push(b);
  }

  u32(v: number): this {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32LE(v >>> 0);
    return this.push(b);
  }

  f64(v: number): this {
    const b = Buffer.allocUnsafe(8);
    b.writeDoubleLE(v);
    return this.push(b);
  }

  bytes(v: Uint8Array | string): this {
    const data = typeof v === "string" ? encoder.encode(v) : v;
    this.u32(data.length);
    return this.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }

  /** The complete frame, length prefix included. */
  frame(): Buffer {
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32LE(this.length);
    return Buffer.concat([head, ...this.parts], 4 + this.length);
  }

  private push(b: Buffer): this {
    this.parts.push(b);
    this.length += b.length;
    return this;
  }
}

export class FrameReader {
  private pos = 0;

  constructor(private readonly buf: Buffer) {}

  u8(): number {
    this.need(1);
    return this.buf.readUInt8(this.pos++);
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  bytes(): Uint8Array {
    const n = this.u32();
    this.need(n);
    // Copy so that a stored value does not pin the whole receive buffer.
    const out = Uint8Array.prototype.slice.call(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  string(): string {
    return decoder.decode(this.bytes());
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new Error("malformed store frame: it ends before its fields do");
  }
}

/**
 * Splits a byte stream into frames. `limit` is read on every frame so that a connection can be
 * held to the small pre-authentication limit and then allowed larger frames.
 */
export class FrameSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly limit: () => number) {}

  push(chunk: Buffer): Buffer[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const frames: Buffer[] = [];
    while (this.pendingBytes >= 4) {
      const head = this.peek(4);
      const len = head.readUInt32LE(0);
      if (len > this.limit()) throw new FrameTooLargeError(len, this.limit());
      if (this.pendingBytes < 4 + len) break;
      const all = this.take(4 + len);
      frames.push(all.subarray(4));
    }
    return frames;
  }

  private peek(n: number): Buffer {
    if (this.pending[0]!.length >= n) return this.pending[0]!;
    this.pending = [Buffer.concat(this.pending)];
    return this.pending[0]!;
  }

  private take(n: number): Buffer {
    const joined = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    const out = joined.subarray(0, n);
    const rest = joined.subarray(n);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    return out;
  }
}

export class FrameTooLargeError extends Error {
  constructor(length: number, limit: number) {
    super(`store frame of ${length} bytes exceeds the limit of ${limit} bytes`);
  }
}
