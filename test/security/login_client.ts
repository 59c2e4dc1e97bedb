// A client of the store login written from the protocol's description (store/protocol.ts), not
// from ringtorch's client: the tests use it to log in by hand, replay, reflect and flood.
import { createHmac, randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

export const SERVER_LABEL = "ringtorch store login: server";
export const CLIENT_LABEL = "ringtorch store login: client";

/** HMAC-SHA256 keyed by the token over each part as [u32 LE length][bytes]. */
export function proof(token: string, label: string, ...parts: Buffer[]): Buffer {
  const h = createHmac("sha256", token);
  for (const p of [Buffer.from(label), ...parts]) {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(p.length);
    h.update(len).update(p);
  }
  return h.digest();
}

/** [u32 length][u8 command][u32 id][u32 n][n bytes] */
export function frame(command: number, id: number, ...byteStrings: Buffer[]): Buffer {
  const body = [Buffer.from([command]), u32(id)];
  for (const b of byteStrings) body.push(u32(b.length), b);
  const payload = Buffer.concat(body);
  return Buffer.concat([u32(payload.length), payload]);
}

export function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return b;
}

/** A raw socket with everything it received, and whether the other side closed it. */
export class Raw {
  received = Buffer.alloc(0);
  closed = false;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly socket: Socket) {
    socket.on("data", (d) => {
      this.received = Buffer.concat([this.received, d]);
      this.wake();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
  }

  static open(port: number): Promise<Raw> {
    return new Promise((resolve, reject) => {
      const s = connect({ host: "127.0.0.1", port }, () => resolve(new Raw(s)));
      s.once("error", reject);
    });
  }

  /** Waits until `done()` holds or the connection closed; fails after `guardMs`. */
  async until(done: () => boolean, what: string, guardMs = 20_000): Promise<void> {
    const deadline = Date.now() + guardMs;
    while (!done() && !this.closed) {
      if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  whenClosed(what: string, guardMs?: number): Promise<void> {
    return this.until(() => this.closed, what, guardMs);
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

/** Logs in by hand; resolves with the open connection. */
export async function logIn(port: number, token: string): Promise<Raw> {
  const raw = await Raw.open(port);
  const nonceC = randomBytes(16);
  raw.socket.write(frame(1, 0, nonceC));
  await raw.until(() => raw.received.length >= 4 + 9 + 16 + 4 + 32, "the server's login answer");
  const nonceS = raw.received.subarray(4 + 9, 4 + 9 + 16);
  raw.received = Buffer.alloc(0);
  raw.socket.write(frame(11, 0, proof(token, CLIENT_LABEL, nonceC, nonceS)));
  await raw.until(() => raw.received.length >= 9, "the login's acknowledgement");
  if (raw.received[4] !== 0) throw new Error(`login refused with status ${raw.received[4]}`);
  raw.received = Buffer.alloc(0);
  return raw;
}
