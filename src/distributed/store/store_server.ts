import { createServer, type Server, type Socket } from "node:net";
import { KeyValueTable } from "./kv_table.js";
import {
  Command,
  FrameReader,
  FrameSplitter,
  FrameWriter,
  MAX_FRAME,
  MAX_UNAUTHENTICATED_FRAME,
  Status,
} from "./protocol.js";
import { checkOptions } from "../../util/options.js";
import { ServerLogin } from "./login.js";
import { RefusalLog } from "./refusal_log.js";
import { checkTokenGiven } from "./token.js";

export interface StoreServerOptions {
  /** The one interface to listen on; 127.0.0.1 unless told otherwise. */
  host?: string;
  /** 0 picks a free port (read it back from `.port`). */
  port: number;
  token: string;
  /** Where refusals and protocol errors are reported (at most 10 lines per 10 s); stderr by default. */
  log?: (message: string) => void;
  /** A client must complete the login within this time or it is dropped (10 s). */
  helloTimeoutMs?: number;
  /** Connections still logging in at once; past it the oldest is dropped (64). */
  maxPendingLogins?: number;
}

const OPTION_KEYS = ["host", "port", "token", "log", "helloTimeoutMs", "maxPendingLogins"];

/** Past this many unsent reply bytes, a client's requests are no longer read until it reads its replies. */
const HIGH_WATER_BYTES = 1 << 20;

interface Connection {
  socket: Socket;
  peer: string;
  login: ServerLogin;
  loginTimer: NodeJS.Timeout | null;
  cancels: Set<() => void>;
  /** Frames received and not yet handled (a chunk's worth at most while answers wait to be sent). */
  queue: Buffer[];
}

/**
 * The server side of TCPStore. It keeps the table in this process's memory and answers only
 * clients that completed the store login (protocol.ts, login.ts): this server proves that it
 * holds the job token first, then the client proves it; the token itself never crosses the wire.
 *
 * A connection that has not logged in costs little and holds nothing up: it is dropped, without
 * an answer, at its first malformed or unexpected frame, when its proof is wrong, or when the
 * login takes longer than `helloTimeoutMs`; at most `maxPendingLogins` wait at once (the oldest
 * goes first); it never keeps the process alive; refusals are logged at a bounded rate. A client
 * that does not read its replies is not read from until it does.
 */
export class TCPStoreServer {
  private readonly table = new KeyValueTable();
  private readonly connections = new Set<Connection>();
  /** Connections still logging in, oldest first. */
  private readonly loggingIn = new Set<Connection>();
  private readonly refusals: RefusalLog;
  private closed = false;
  private unrefed = false;

  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
    private readonly token: string,
    private readonly log: (message: string) => void,
    private readonly helloTimeoutMs: number,
    private readonly maxPendingLogins: number,
  ) {
    this.refusals = new RefusalLog(log);
  }

  static async listen(opts: StoreServerOptions): Promise<TCPStoreServer> {
    checkOptions("TCPStoreServer.listen", opts, OPTION_KEYS);
    const token = checkTokenGiven(opts.token, "TCPStoreServer.listen");
    const host = opts.host ?? "127.0.0.1";
    const log = opts.log ?? ((m: string) => process.stderr.write(`ringtorch store: ${m}\n`));
    if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
      throw new Error(`TCPStoreServer.listen: port must be an integer in 0..65535, got ${opts.port}`);
    }
    const maxPending = opts.maxPendingLogins ?? 64;
    if (!Number.isInteger(maxPending) || maxPending < 1) {
      throw new Error(`TCPStoreServer.listen: maxPendingLogins must be a positive integer, got ${maxPending}`);
    }
    return new Promise((resolve, reject) => {
      const server = createServer();
      server.once("error", (err: NodeJS.ErrnoException) => reject(listenError(err, host, opts.port)));
      server.listen({ host, port: opts.port, exclusive: true }, () => {
        const address = server.address();
        const port = typeof address === "object" && address ? address.port : opts.port;
        const store = new TCPStoreServer(server, host, port, token, log, opts.helloTimeoutMs ?? 10_000, maxPending);
        server.removeAllListeners("error");
        server.on("error", (err) => store.refusals.refused(`server error: ${err.message}`));
        server.on("connection", (socket) => store.accept(socket));
        resolve(store);
      });
    });
  }

  /** Clients that have logged in and are still connected. */
  get clientCount(): number {
    return this.connections.size - this.loggingIn.size;
  }

  /** Connections open and not yet logged in. */
  get pendingLoginCount(): number {
    return this.loggingIn.size;
  }

  /** Lets the process exit while the server is still listening (for a server hosted by rank 0). */
  unref(): void {
    this.unrefed = true;
    this.server.unref();
    for (const c of this.connections) c.socket.unref();
  }

  /** Stops listening and drops every connection, logged in or not, at once. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const c of [...this.connections]) this.drop(c);
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    socket.on("error", () => {});
    if (this.closed) {
      socket.destroy();
      return;
    }
    // Until it has logged in, a connection must never be what keeps the process running.
    socket.unref();
    socket.setNoDelay(true);
    const conn: Connection = { socket, peer: `${socket.remoteAddress}:${socket.remotePort}`, login: new ServerLogin(this.token), loginTimer: null, cancels: new Set(), queue: [] };
    if (this.loggingIn.size >= this.maxPendingLogins) {
      const oldest = this.loggingIn.values().next().value!;
      this.refuse(oldest, `${this.maxPendingLogins} connections were already logging in; the oldest is dropped`);
    }
    this.connections.add(conn);
    this.loggingIn.add(conn);
    conn.loginTimer = setTimeout(() => this.refuse(conn, `it did not complete the login within ${this.helloTimeoutMs} ms`), this.helloTimeoutMs);
    conn.loginTimer.unref();
    const splitter = new FrameSplitter(() => (conn.login.done ? MAX_FRAME : MAX_UNAUTHENTICATED_FRAME));
    socket.on("data", (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = splitter.push(chunk);
      } catch (err) {
        if (conn.login.done) this.log(`dropped the connection from ${conn.peer}: ${(err as Error).message}`);
        else this.refuse(conn, (err as Error).message);
        this.drop(conn);
        return;
      }
      for (const f of frames) conn.queue.push(f);
      this.serve(conn);
    });
    socket.on("close", () => this.drop(conn));
  }

  /**
   * Handles the frames received, answers in one write, until the answers not yet sent pass the
   * high-water mark: then it stops reading from this client until they are drained.
   */
  private serve(conn: Connection): void {
    const socket = conn.socket;
    socket.cork();
    let next = 0;
    while (next < conn.queue.length && this.connections.has(conn) && socket.writableLength <= HIGH_WATER_BYTES) {
      const frame = conn.queue[next++]!;
      if (conn.login.done) this.handle(conn, frame);
      else this.login(conn, frame);
    }
    conn.queue.splice(0, next);
    socket.uncork();
    if (conn.queue.length > 0 && this.connections.has(conn) && !socket.isPaused()) {
      socket.pause();
      socket.once("drain", () => {
        socket.resume();
        this.serve(conn);
      });
    }
  }

  /** One step of the login; anything but the expected frame drops the connection unanswered. */
  private login(conn: Connection, frame: Buffer): void {
    let id = 0;
    let body: (w: FrameWriter) => void;
    try {
      const r = new FrameReader(frame);
      const command = r.u8();
      id = r.u32();
      body = conn.login.step(r, command);
    } catch (err) {
      const why = (err as Error).message;
      this.refuse(conn, /malformed store frame/.test(why) ? "its login was malformed" : why);
      return;
    }
    if (conn.login.done) {
      clearTimeout(conn.loginTimer!);
      this.loggingIn.delete(conn);
      if (!this.unrefed) conn.socket.ref();
    }
    this.reply(conn, Status.Ok, id, body);
  }

  private handle(conn: Connection, frame: Buffer): void {
    let id = 0;
    try {
      const r = new FrameReader(frame);
      const command = r.u8();
      id = r.u32();
      this.dispatch(conn, command, id, r);
    } catch (err) {
      this.reply(conn, Status.Error, id, (w) => w.bytes((err as Error).message));
    }
  }

  private dispatch(conn: Connection, command: number, id: number, r: FrameReader): void {
    const t = this.table;
    switch (command) {
      case Command.Set: {
        const key = r.string();
        t.set(key, r.bytes());
        return this.reply(conn, Status.Ok, id);
      }
      case Command.SetQuiet: {
        const key = r.string();
        t.set(key, r.bytes());
        return;
      }
      case Command.Get: {
        const key = r.string();
        const timeoutMs = r.u32();
        return this.whenPresent(conn, [key], timeoutMs, (present) =>
          present ? this.reply(conn, Status.Ok, id, (w) => w.bytes(t.get(key)!)) : this.reply(conn, Status.Timeout, id),
        );
      }
      case Command.Add: {
        const key = r.string();
        const value = t.add(key, r.f64());
        return this.reply(conn, Status.Ok, id, (w) => w.f64(value));
      }
      case Command.CompareSet: {
        const key = r.string();
        const expected = r.bytes();
        const value = t.compareSet(key, expected, r.bytes());
        return this.reply(conn, Status.Ok, id, (w) => w.bytes(value));
      }
      case Command.Wait: {
        const keys = readKeys(r);
        const timeoutMs = r.u32();
        return this.whenPresent(conn, keys, timeoutMs, (present) => this.reply(conn, present ? Status.Ok : Status.Timeout, id));
      }
      case Command.Check: {
        const keys = readKeys(r);
        return this.reply(conn, Status.Ok, id, (w) => w.u8(keys.every((k) => t.has(k)) ? 1 : 0));
      }
      case Command.Delete: {
        const deleted = t.delete(r.string());
        return this.reply(conn, Status.Ok, id, (w) => w.u8(deleted ? 1 : 0));
      }
      case Command.NumKeys:
        return this.reply(conn, Status.Ok, id, (w) => w.u32(t.size));
      default:
        throw new Error(`unknown store command ${command}`);
    }
  }

  private whenPresent(conn: Connection, keys: string[], timeoutMs: number, done: (present: boolean) => void): void {
    let settled = false;
    let cancel: (() => void) | undefined;
    cancel = this.table.whenPresent(keys, timeoutMs, (present) => {
      settled = true;
      if (cancel) conn.cancels.delete(cancel);
      done(present);
    });
    if (!settled) conn.cancels.add(cancel);
  }

  private reply(conn: Connection, status: Status, id: number, body?: (w: FrameWriter) => void): void {
    if (!this.connections.has(conn) || conn.socket.destroyed) return;
    const w = new FrameWriter().u8(status).u32(id);
    body?.(w);
    conn.socket.write(w.frame());
  }

  private refuse(conn: Connection, reason: string): void {
    if (!this.connections.has(conn)) return;
    this.refusals.refused(`refused a connection from ${conn.peer}: ${reason}`);
    this.drop(conn);
  }

  private drop(conn: Connection): void {
    if (conn.loginTimer) clearTimeout(conn.loginTimer);
    for (const cancel of conn.cancels) cancel();
    conn.cancels.clear();
    conn.queue.length = 0;
    this.connections.delete(conn);
    this.loggingIn.delete(conn);
    conn.socket.destroy();
  }
}

function readKeys(r: FrameReader): string[] {
  const n = r.u32();
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push(r.string());
  return keys;
}

function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === "EADDRINUSE") {
    return new Error(
      `cannot host the ringtorch store on ${host}:${port}: the port is already in use (another job, or a process left ` +
        `from an earlier run, holds it). Choose another port (MASTER_PORT) or stop that process.`,
    );
  }
  if (err.code === "EADDRNOTAVAIL") {
    return new Error(`cannot host the ringtorch store on ${host}:${port}: no interface of this machine has the address ${host}.`);
  }
  return new Error(`cannot host the ringtorch store on ${host}:${port}: ${err.message}`);
}
