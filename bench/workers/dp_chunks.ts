// Used by bench/dataparallel.ts: its modes' processes kept alive side by side and stepped in short
// alternated chunks, so that every mode of a round sees the same load, minute by minute.
//
// Why: run one after another, each mode for its whole timing, the one-thread baseline moved ±10%
// between rounds on this VM and a round's ratio moved with whatever the machine did in the half
// minute between the two. Chunks of a few hundred ms alternated between warm processes put the
// load's drift on both sides of a ratio.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface, type Interface } from "node:readline";

/**
 * The parent's side: one child process that answers one line per request line ("warm N", "run N",
 * "result"). Every answer has a timeout, and a child that exits or fails is reported with its stderr.
 */
export class ChunkedChild {
  private readonly child: ChildProcess;
  private readonly lines: Interface;
  private readonly pending: string[] = [];
  private waiter: ((line: string | null) => void) | null = null;
  private stderr = "";
  private exited = false;

  constructor(
    private readonly name: string,
    command: string,
    argv: readonly string[],
    private readonly timeoutMs: number,
  ) {
    this.child = spawn(command, argv, { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr!.setEncoding("utf8").on("data", (s: string) => (this.stderr = (this.stderr + s).slice(-4000)));
    this.lines = createInterface({ input: this.child.stdout! });
    this.lines.on("line", (line) => {
      if (!line.startsWith("ANSWER ")) return;
      if (this.waiter) this.waiter(line.slice(7));
      else this.pending.push(line.slice(7));
    });
    this.child.on("exit", () => {
      this.exited = true;
      this.waiter?.(null);
    });
  }

  /** Sends one request and waits for its answer line. */
  async ask(request: string): Promise<string> {
    if (this.exited) throw this.failure(`exited before "${request}"`);
    this.child.stdin!.write(`${request}\n`);
    const line = this.pending.shift() ?? (await new Promise<string | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(this.failure(`did not answer "${request}" within ${this.timeoutMs} ms`)), this.timeoutMs);
      this.waiter = (l) => {
        clearTimeout(timer);
        this.waiter = null;
        resolve(l);
      };
    }));
    if (line === null) throw this.failure(`exited during "${request}"`);
    if (line.startsWith("ERROR ")) throw this.failure(`failed in "${request}": ${line.slice(6)}`);
    return line;
  }

  close(): void {
    this.child.stdin!.end();
    if (!this.exited) this.child.kill();
  }

  private failure(what: string): Error {
    return new Error(`bench/dataparallel.ts: the ${this.name} process ${what}: ${this.stderr.trim().split("\n").slice(-3).join(" / ")}`);
  }
}

/** The child's side: answers each request line on stdout (prefixed, so that other output is ignored) until stdin ends. */
export async function serveChunks(handlers: Record<string, (arg: number) => unknown>): Promise<void> {
  for await (const line of createInterface({ input: process.stdin })) {
    const [verb, arg] = line.trim().split(/\s+/);
    const handler = handlers[verb!];
    try {
      if (!handler) throw new Error(`unknown request ${JSON.stringify(line)}`);
      // Awaited so that handlers may be async; the event loop runs between requests (GC observers).
      const value = await handler(Number(arg ?? 0));
      process.stdout.write(`ANSWER ${JSON.stringify(value ?? null)}\n`);
    } catch (error) {
      process.stdout.write(`ANSWER ERROR ${(error as Error).message ?? String(error)}\n`);
    }
  }
}
