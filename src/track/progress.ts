import { checkOptions } from "../util/options.js";
import { formatLine } from "./progress_format.js";

export interface ProgressOptions {
  /** Text before the bar. */
  desc?: string;
  /** Number of items expected (default: the iterable's length or size, when it has one). */
  total?: number;
  /** What an item is called in the rate (default "it"). */
  unit?: string;
  /** Show nothing. Default: true on every process but local rank 0 (LOCAL_RANK), as the seed's tqdm calls do. */
  disable?: boolean;
  /** Where the bar goes (default process.stderr, as tqdm). */
  stream?: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Seconds between plain lines when the stream is not a terminal (default 5). */
  lineInterval?: number;
  /** Keep the finished bar on screen (default true). */
  leave?: boolean;
}

const KEYS = ["desc", "total", "unit", "disable", "stream", "lineInterval", "leave"];
/** Redraws on a terminal at most this often (tqdm's mininterval). */
const REDRAW_S = 0.1;

const active = new Set<Progress<unknown>>();

/**
 * A progress bar in tqdm's manner. On a terminal it redraws one line in place; elsewhere (a log
 * file, a pipe) it prints a plain line every `lineInterval` seconds and one at the end, because
 * carriage returns turn a log file into one endless line.
 *
 *   for (const batch of track.progress(loader, { desc: `epoch ${epoch}` })) { …; bar.setPostfix({ loss }) }
 */
export class Progress<T> implements Iterable<T>, AsyncIterable<T> {
  n = 0;
  total: number | null;
  desc: string;
  readonly disabled: boolean;
  private readonly unit: string;
  private readonly stream: NonNullable<ProgressOptions["stream"]>;
  private readonly tty: boolean;
  private readonly lineInterval: number;
  private readonly leave: boolean;
  private postfix: Record<string, unknown> = {};
  private readonly start = performance.now();
  private lastDraw = -Infinity;
  private closed = false;
  private shown = false;

  constructor(
    private readonly iterable: Iterable<T> | AsyncIterable<T> | null,
    options: ProgressOptions = {},
  ) {
    checkOptions("track.progress", options, KEYS);
    const sized = iterable as { length?: unknown; size?: unknown } | null;
    const inferred = typeof sized?.length === "number" ? sized.length : typeof sized?.size === "number" ? sized.size : null;
    this.total = options.total ?? inferred;
    if (this.total !== null && !(this.total >= 0)) throw new RangeError(`track.progress: total must be a non-negative number, got ${this.total}`);
    this.desc = options.desc ?? "";
    this.unit = options.unit ?? "it";
    this.disabled = options.disable ?? Number(process.env.LOCAL_RANK ?? 0) !== 0;
    this.stream = options.stream ?? process.stderr;
    this.tty = this.stream.isTTY === true;
    this.lineInterval = options.lineInterval ?? 5;
    this.leave = options.leave ?? true;
    if (!this.disabled) {
      active.add(this as Progress<unknown>);
      this.draw(true);
    }
  }

  /** Counts `n` more items done (for bars driven by hand). */
  update(n = 1): void {
    this.n += n;
    this.draw(false);
  }

  /** Values shown after the rate: `setPostfix({ loss: 0.25 })` → `, loss=0.25`. */
  setPostfix(values: Record<string, unknown>): void {
    this.postfix = { ...values };
    this.draw(false);
  }

  setDescription(desc: string): void {
    this.desc = desc;
    this.draw(false);
  }

  /** Prints a line above the bar without breaking it (tqdm.write). */
  write(message: string): void {
    writeAbove(message, this.stream);
  }

  /** Draws the final state and ends the line. Iterating to the end (or breaking out) closes the bar. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.disabled) return;
    active.delete(this as Progress<unknown>);
    if (this.tty) this.stream.write(this.leave ? `\r${this.line()}\x1b[K\n` : "\r\x1b[K");
    else this.stream.write(`${this.line()}\n`);
  }

  *[Symbol.iterator](): Iterator<T> {
    const it = this.iterable as Iterable<T> | null;
    if (!it || typeof it[Symbol.iterator] !== "function") throw new TypeError("track.progress: this bar wraps no synchronous iterable (use for await, or update() by hand)");
    try {
      for (const item of it) {
        yield item;
        this.update(1);
      }
    } finally {
      this.close();
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const it = this.iterable;
    if (!it) throw new TypeError("track.progress: this bar wraps no iterable (call update() by hand)");
    try {
      for await (const item of it as AsyncIterable<T>) {
        yield item;
        this.update(1);
      }
    } finally {
      this.close();
    }
  }

  /** The bar's current text (what a terminal shows). */
  line(): string {
    const elapsed = (performance.now() - this.start) / 1000;
    // A pseudo-terminal without a size reports 0 columns.
    const columns = this.stream.columns || Number(process.env.COLUMNS) || 80;
    return formatLine({ desc: this.desc, n: this.n, total: this.total, elapsed, rate: this.n > 0 && elapsed > 0 ? this.n / elapsed : null, unit: this.unit, postfix: this.postfix }, columns);
  }

  /** Redraws on a terminal now and then; off a terminal, prints a line every lineInterval seconds. */
  private draw(force: boolean): void {
    if (this.disabled || this.closed) return;
    const now = performance.now() / 1000;
    if (!force && now - this.lastDraw < (this.tty ? REDRAW_S : this.lineInterval)) return;
    this.lastDraw = now;
    this.shown = true;
    this.stream.write(this.tty ? `\r${this.line()}\x1b[K` : `${this.line()}\n`);
  }

  /** @internal Clears or restores the bar's line around a message. */
  redrawAfter(message: string): void {
    if (this.tty && this.shown) this.stream.write(`\r\x1b[K${message}\n\r${this.line()}\x1b[K`);
    else this.stream.write(`${message}\n`);
  }
}

/** Prints a message without breaking the bars on the same stream (tqdm.write). */
export function writeAbove(message: string, stream: NodeJS.WritableStream = process.stderr): void {
  const bar = [...active].find((b) => (b as unknown as { stream: unknown }).stream === stream);
  if (bar) bar.redrawAfter(message);
  else stream.write(`${message}\n`);
}

/** Wraps an iterable (sync or async) in a progress bar; with no iterable, drive it with update(). */
export function progress<T>(iterable: Iterable<T> | AsyncIterable<T> | null = null, options: ProgressOptions = {}): Progress<T> {
  return new Progress(iterable, options);
}
