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
import { checkTokenGiven, tokensEqual } from "./token.js";

export interface StoreServerOptions {
  /** The one interface to listen on; 127.0.0.1 unless told otherwise. */
  host?: string;
  /** 0 picks a free port (read it back from `.port`). */
  port: number;
  token: string;
  /** Where refusals and protocol errors are reported; stderr by default. */
  log?: (message: string) => void;
  /** A client must authenticate within this time or it is dropped. */
  helloTimeoutMs?: number;
}

interface Connection {
  socket: Socket;
  authenticated: boolean;
  cancels: Set<() => void>;
}

/**
 * The server side of TCPStore. It keeps the table in this process's memory and answers clients that
 * presented the job token in their first frame; others are refused (and the refusal logged) before
 * any request of theirs is read, so they learn neither keys nor values.
 */
export class TCPStoreServer {
  private readonly table = new KeyValueTable();
  private readonly connections = new Set<Connection>();
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly host: string,
    readonly port: number,
    private readonly token: string,
    private readonly log: (message: string) => void,
    private readonly helloTimeoutMs: number,
  ) {}

  static async listen(opts: StoreServerOptions): Promise<TCPStoreServer> {
    const token = checkTokenGiven(opts.token, "TCPStoreServer.listen");
    const host = opts.host ?? "127.0.0.1";
    const log = opts.log ?? ((m: string) => process.stderr.write(`ringtorch store: ${m}\n`));
    if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
      throw new Error(`TCPStoreServer.listen: port must be an integer in 0..65535, got ${opts.port}`);
    }
    return new Promise((resolve, reject) => {
      const server = createServer();
      server.once("error", (err: NodeJS.ErrnoException) => reject(listenError(err, host, opts.port)));
      server.listen({ host, port: opts.port, exclusive: true }, () => {
        const address = server.address();
        const port = typeof address === "object" && address ? address.port : opts.port;
        const store = new TCPStoreServer(server, host, port, token, log, opts.helloTimeoutMs ?? 10_000);
        server.removeAllListeners("error");
        server.on("error", (err) => log(`server error: ${err.message}`));
        server.on("connection", (socket) => store.accept(socket));
        resolve(store);
      });
    });
  }

  /** Clients that have authenticated and are still connected. */
  get clientCount(): number {
    let n = 0;
    for (const c of this.connections) if (c.authenticated) n++;
    return n;
  }

  /** Lets the process exit while the server is still listening (for a server hosted by rank 0). */
  unref(): void {
    this.server.unref();
    for (const c of this.connections) c.socket.unref();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const c of this.connections) this.drop(c);
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const conn: Connection = { socket, authenticated: false, cancels: new Set() };
    this.connections.add(conn);
    socket.setNoDelay(true);
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    const helloTimer = setTimeout(() => {
      this.log(`refused a connection from ${peer}: it sent no token within ${this.helloTimeoutMs} ms`);
      this.drop(conn);
    }, this.helloTimeoutMs);
    helloTimer.unref();
    const splitter = new FrameSplitter(() => (conn.authenticated ? MAX_FRAME : MAX_UNAUTHENTICATED_FRAME));
    socket.on("data", (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = splitter.push(chunk);
      } catch (err) {
        this.log(`dropped the connection from ${peer}: ${(err as Error).message}`);
        this.drop(conn);
        return;
      }
      for (const frame of frames) {
        if (this.connections.has(conn)) this.handle(conn, frame, peer, helloTimer);
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(helloTimer);
      this.drop(conn);
    });
  }

  private handle(conn: Connection, frame: Buffer, peer: string, helloTimer: NodeJS.Timeout): void {
    let command = 0;
    let id = 0;
    try {
      const r = new FrameReader(frame);
      command = r.u8();
      id = r.u32();
      if (!conn.authenticated) {
        clearTimeout(helloTimer);
        if (command !== Command.Hello || !tokensEqual(r.bytes(), this.token)) {
          this.log(`refused a connection from ${peer}: ${command === Command.Hello ? "wrong token" : "no token"}`);
          conn.socket.end(new FrameWriter().u8(Status.Unauthorized).u32(id).frame());
          this.forget(conn);
          return;
        }
        conn.authenticated = true;
        this.reply(conn, Status.Ok, id);
        return;
      }
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

  private forget(conn: Connection): void {
    for (const cancel of conn.cancels) cancel();
    conn.cancels.clear();
    this.connections.delete(conn);
  }

  private drop(conn: Connection): void {
    this.forget(conn);
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
