import { connect as netConnect, type Socket } from "node:net";
import { checkOptions } from "../../util/options.js";
import { Command, FrameReader, FrameSplitter, FrameWriter, MAX_FRAME, MAX_UNAUTHENTICATED_FRAME, Status } from "./protocol.js";
import { clientLogin, SilentServerError, StoreAuthError } from "./login.js";
import { DEFAULT_STORE_TIMEOUT_MS, type Store, StoreTimeoutError, toBytes } from "./store.js";
import { checkTokenGiven } from "./token.js";

export { TCPStoreServer, type StoreServerOptions } from "./store_server.js";
export { StoreAuthError } from "./login.js";

export interface TCPStoreConnectOptions {
  host: string;
  port: number;
  token: string;
  /** How long to keep retrying the connection, and the default for `get` and `wait`. */
  timeoutMs?: number;
  /** Stops the retries (the connect then rejects). */
  signal?: AbortSignal;
}

interface Pending {
  resolve: (r: FrameReader) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
  keys?: string[];
  waitMs: number;
}

const CONNECT_KEYS = ["host", "port", "token", "timeoutMs", "signal"];

/** How long a server may take to answer the login's first step before the attempt is retried. */
const LOGIN_REPLY_MS = 5000;
/**
 * A listener that accepts connections but leaves the login unanswered this many times in a row is
 * not a ringtorch store (which answers at once, from its own thread or an idle event loop).
 */
const SILENT_LOGINS = 3;

/**
 * A client of TCPStoreServer. One socket carries every request, matched to its answer by id.
 * The socket does not keep the process alive while no request is in flight.
 */
export class TCPStore implements Store {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;
  /** Until the server has proven itself, its replies are held to the login's small frames. */
  private loggedIn = false;

  private constructor(
    private readonly socket: Socket,
    readonly host: string,
    readonly port: number,
    readonly timeoutMs: number,
  ) {
    const splitter = new FrameSplitter(() => (this.loggedIn ? MAX_FRAME : MAX_UNAUTHENTICATED_FRAME));
    socket.on("data", (chunk: Buffer) => {
      try {
        for (const frame of splitter.push(chunk)) this.onFrame(frame);
      } catch (err) {
        const why = `it sent a malformed reply: ${(err as Error).message}`;
        this.fail(this.loggedIn ? new Error(`the ringtorch store at ${this.address}: ${why}`) : new StoreAuthError(this.address, why));
        socket.destroy();
      }
    });
    socket.on("error", (err) => this.fail(new Error(`lost the connection to the ringtorch store at ${this.address}: ${err.message}`)));
    socket.on("close", () => this.fail(new Error(`the connection to the ringtorch store at ${this.address} closed`)));
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** The local address this client reached the store from: the interface that routes to it. */
  get localAddress(): string | undefined {
    return this.socket.localAddress;
  }

  /**
   * Connects, retrying until `timeoutMs` while the server is not up yet (or does not answer),
   * then logs in (protocol.ts). Throws StoreAuthError at once if the server fails its proof.
   */
  static async connect(opts: TCPStoreConnectOptions): Promise<TCPStore> {
    checkOptions("TCPStore.connect", opts, CONNECT_KEYS);
    const token = checkTokenGiven(opts.token, "TCPStore.connect");
    const timeoutMs = opts.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    const address = `${opts.host}:${opts.port}`;
    let delay = 20;
    let lastError = "";
    let silent = 0;
    for (;;) {
      try {
        const socket = await openSocket(opts.host, opts.port, Math.max(1, deadline - Date.now()));
        const store = new TCPStore(socket, opts.host, opts.port, timeoutMs);
        const abandon = () => socket.destroy();
        opts.signal?.addEventListener("abort", abandon);
        try {
          await store.logIn(token, Math.max(1000, Math.min(LOGIN_REPLY_MS, deadline - Date.now())));
        } catch (err) {
          socket.destroy();
          throw err;
        } finally {
          opts.signal?.removeEventListener("abort", abandon);
        }
        return store;
      } catch (err) {
        if (err instanceof StoreAuthError) throw err;
        silent = err instanceof SilentServerError ? silent + 1 : 0;
        if (silent >= SILENT_LOGINS) throw new StoreAuthError(address, `it accepted the connection but left the login unanswered ${silent} times in a row`);
        lastError = (err as Error).message;
      }
      const left = deadline - Date.now();
      if (left <= 0) break;
      if (opts.signal?.aborted) throw new Error(`connecting to the ringtorch store at ${address} was abandoned`);
      await new Promise((r) => setTimeout(r, Math.min(delay, left)));
      delay = Math.min(delay * 2, 500);
    }
    throw new Error(
      `could not connect to the ringtorch store at ${address} within ${timeoutMs} ms (last error: ${lastError}). ` +
        "Check that the process hosting it (rank 0 or ringrun) is running and that MASTER_ADDR/MASTER_PORT point at it; " +
        "if another program holds that port, the store cannot be reached there.",
    );
  }

  /** The login (login.ts), each answer awaited at most `replyMs`. */
  private async logIn(token: string, replyMs: number): Promise<void> {
    await clientLogin(token, this.address, async (w) => {
      try {
        return await this.request(w, 0, 0, undefined, replyMs);
      } catch (err) {
        if (err instanceof StoreAuthError) throw err;
        const message = `the process at ${this.address} did not answer the store login (${(err as Error).message})`;
        throw this.failure ? new Error(message) : new SilentServerError(message);
      }
    });
    this.loggedIn = true;
  }

  async set(key: string, value: Uint8Array | string): Promise<void> {
    await this.send((id) => new FrameWriter().u8(Command.Set).u32(id).bytes(key).bytes(toBytes(value)));
  }

  /**
   * Sets a key without waiting for (or getting) an answer; the write goes out at once when the
   * socket can take it, so a thread about to block still publishes it. Errors are dropped.
   */
  setQuiet(key: string, value: Uint8Array | string): void {
    if (this.failure || this.socket.destroyed) return;
    this.socket.write(new FrameWriter().u8(Command.SetQuiet).u32(0).bytes(key).bytes(toBytes(value)).frame());
  }

  async get(key: string, timeoutMs = this.timeoutMs): Promise<Uint8Array> {
    const r = await this.send((id) => new FrameWriter().u8(Command.Get).u32(id).bytes(key).u32(timeoutMs), timeoutMs, [key]);
    return r.bytes();
  }

  async add(key: string, amount: number): Promise<number> {
    const r = await this.send((id) => new FrameWriter().u8(Command.Add).u32(id).bytes(key).f64(amount));
    return r.f64();
  }

  async compareSet(key: string, expected: Uint8Array | string, desired: Uint8Array | string): Promise<Uint8Array> {
    const r = await this.send((id) =>
      new FrameWriter().u8(Command.CompareSet).u32(id).bytes(key).bytes(toBytes(expected)).bytes(toBytes(desired)),
    );
    return r.bytes();
  }

  async wait(keys: string[], timeoutMs = this.timeoutMs): Promise<void> {
    await this.send((id) => writeKeys(new FrameWriter().u8(Command.Wait).u32(id), keys).u32(timeoutMs), timeoutMs, keys);
  }

  async check(keys: string[]): Promise<boolean> {
    const r = await this.send((id) => writeKeys(new FrameWriter().u8(Command.Check).u32(id), keys));
    return r.u8() === 1;
  }

  async deleteKey(key: string): Promise<boolean> {
    const r = await this.send((id) => new FrameWriter().u8(Command.Delete).u32(id).bytes(key));
    return r.u8() === 1;
  }

  async numKeys(): Promise<number> {
    const r = await this.send((id) => new FrameWriter().u8(Command.NumKeys).u32(id));
    return r.u32();
  }

  async close(): Promise<void> {
    this.fail(new Error(`the client of the ringtorch store at ${this.address} was closed`));
    if (this.socket.destroyed) return;
    await new Promise<void>((resolve) => {
      this.socket.once("close", () => resolve());
      this.socket.ref();
      this.socket.end();
      setTimeout(() => {
        this.socket.destroy();
        resolve();
      }, 1000).unref();
    });
  }

  private send(build: (id: number) => FrameWriter, waitMs = this.timeoutMs, keys?: string[]): Promise<FrameReader> {
    const id = this.nextId;
    this.nextId = this.nextId >= 0xfffffff0 ? 1 : this.nextId + 1;
    return this.request(build(id), waitMs, id, keys);
  }

  /** `graceMs`: how long past `waitMs` a silent server is waited for. */
  private request(w: FrameWriter, waitMs: number, id: number, keys?: string[], graceMs = 5000): Promise<FrameReader> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        resolve,
        reject: (e) => reject(e instanceof StoreTimeoutError || e instanceof StoreAuthError ? e : withKeys(e, keys)),
        keys,
        waitMs,
      };
      // The server answers timeouts itself; this timer only covers a server that went silent.
      entry.timer = setTimeout(() => {
        this.settle(id);
        reject(keys ? new StoreTimeoutError(keys, waitMs, `store ${this.address}`) : new Error(`the ringtorch store at ${this.address} did not answer within ${waitMs + graceMs} ms`));
      }, waitMs + graceMs);
      entry.timer.unref();
      this.pending.set(id, entry);
      this.socket.ref();
      this.socket.write(w.frame());
    });
  }

  private onFrame(frame: Buffer): void {
    const r = new FrameReader(frame);
    const status = r.u8();
    const id = r.u32();
    const entry = this.settle(id);
    if (!entry && !this.loggedIn) {
      this.fail(new StoreAuthError(this.address, "it answered out of turn"));
      this.socket.destroy();
      return;
    }
    if (!entry) return;
    if (!this.loggedIn && status !== Status.Ok) return entry.reject(new StoreAuthError(this.address, `it answered the login with status ${status}`));
    switch (status) {
      case Status.Ok:
        return entry.resolve(r);
      case Status.Timeout:
        return entry.reject(new StoreTimeoutError(entry.keys ?? [], entry.waitMs, `store ${this.address}`));
      default:
        return entry.reject(new Error(`the ringtorch store at ${this.address} answered with an error: ${r.string()}`));
    }
  }

  private settle(id: number): Pending | undefined {
    const entry = this.pending.get(id);
    if (!entry) return undefined;
    this.pending.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    if (this.pending.size === 0) this.socket.unref();
    return entry;
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const id of [...this.pending.keys()]) this.settle(id)?.reject(err);
  }
}

function writeKeys(w: FrameWriter, keys: string[]): FrameWriter {
  w.u32(keys.length);
  for (const k of keys) w.bytes(k);
  return w;
}

function withKeys(err: Error, keys?: string[]): Error {
  if (!keys) return err;
  return new Error(`${err.message} (while waiting for ${keys.map((k) => JSON.stringify(k)).join(", ")})`);
}

function openSocket(host: string, port: number, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host, port });
    socket.setNoDelay(true);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connect timed out`));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      // Retrying a port nobody listens on yet can connect a socket to itself when the kernel
      // happens to pick that port as the source port; such a socket also keeps the server from
      // binding it. Drop it and try again.
      if (socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress) {
        socket.destroy();
        reject(new Error("connected to itself (no server yet)"));
        return;
      }
      resolve(socket);
    });
    socket.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(err.code ?? err.message));
    });
  });
}
