import { readdirSync, unlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { arrayTypeOf, itemSize, type DType, type TypedArray } from "./dtype.js";
import { Storage } from "./storage.js";
import { Tensor } from "./tensor.js";

/** The native functions behind MappedFile (native/offload/mapped.cc), installed by the cpu backend. */
export interface NativeMapped {
  mappedOpen(path: string): unknown;
  mappedRegion(handle: unknown, offset: number, byteLength: number): SharedArrayBuffer;
  mappedRelease(data: TypedArray, pageOut: boolean): number;
  mappedResident(data: TypedArray): number;
  mappedPopulate(data: TypedArray, write: boolean): boolean;
  mappedClose(handle: unknown): void;
  mappedInfo(dir: string): [number, boolean];
}

let native: NativeMapped | null = null;

export function installMappedFiles(addon: Partial<NativeMapped> | null): void {
  native = addon && typeof addon.mappedRegion === "function" ? (addon as NativeMapped) : null;
}

export interface MappedFileOptions {
  /** Also write released pages out and drop them from the page cache (MADV_PAGEOUT). Default false. */
  pageOut?: boolean;
  /** Part of the file's name (`ringtorch-<label>-p<pid>-<n>.bin`). Default "offload". */
  label?: string;
}

export interface MappedFileStats {
  /** Bytes of live tensors in the file. */
  mappedBytes: number;
  /** How far the file extends (dropped tensors' blocks are given back to the file system as holes). */
  fileBytes: number;
  /** Bytes of the live tensors' pages in memory now (mincore; the page cache's, not only this process's). */
  residentBytes: number;
}

const open = new Set<MappedFile>();
let exitHooked = false;
let sequence = 0;
const NAME = /^ringtorch-[\w.]+-p(\d+)-\d+\.bin$/;

/**
 * Tensor memory in a file of `dir`, mapped into the process (MAP_SHARED): what FSDP's offload puts
 * outside the compute pool. Each tensor is its own page-aligned region of one file that only grows;
 * the kernel pages the regions in when a kernel touches them and writes dirty pages back to the
 * file, never to swap, so a rank can hold more parameters, gradients and optimizer state than RAM.
 * `release` drops a tensor's pages from the process at once (the next touch faults them in again).
 * None of it is counted by memoryPool. The file is removed at `close()` or at process exit (a
 * crashed process's files are removed by the next MappedFile opened in the same directory).
 */
export class MappedFile {
  readonly path: string;
  readonly pageOut: boolean;
  private handle: unknown;
  private readonly page: number;
  private end = 0;
  private readonly live: WeakRef<TypedArray>[] = [];
  private readonly storages = new WeakSet<Storage>();

  constructor(dir: string, options: MappedFileOptions = {}) {
    if (!native) throw new Error("MappedFile: offloading to memory-mapped files needs the cpu backend's native addon (build it with npm run build:native)");
    if (typeof dir !== "string" || dir === "") throw new TypeError(`MappedFile: expected a directory path, got ${JSON.stringify(dir)}`);
    const label = options.label ?? "offload";
    if (!/^[\w.]+$/.test(label)) throw new TypeError(`MappedFile: label must be letters, digits, '_' or '.', got ${JSON.stringify(label)}`);
    const [page, tmpfs] = native.mappedInfo(dir);
    if (tmpfs) throw new Error(`MappedFile: ${dir} is on tmpfs, whose files live in RAM; offload to a directory on a disk`);
    this.page = page;
    this.pageOut = options.pageOut ?? false;
    sweepStale(dir);
    this.path = resolve(join(dir, `ringtorch-${label}-p${process.pid}-${sequence++}.bin`));
    this.handle = native.mappedOpen(this.path);
    open.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.once("exit", () => {
        for (const f of [...open]) f.close();
      });
    }
  }

  get isOpen(): boolean {
    return this.handle !== null;
  }

  /** Storage for n elements in a fresh region of the file: zeros (unwritten file pages read as 0). */
  allocate(dtype: DType, n: number): Storage {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`MappedFile.allocate: expected a non-negative integer number of elements, got ${n}`);
    if (this.handle === null) throw new Error(`MappedFile: ${this.path} is closed; it takes no new tensors`);
    const Ctor = arrayTypeOf(dtype);
    const bytes = n * itemSize(dtype);
    const buffer = bytes === 0 ? new SharedArrayBuffer(0) : native!.mappedRegion(this.handle, this.end, bytes);
    this.end += Math.ceil(bytes / this.page) * this.page;
    const data = new Ctor(buffer, 0, n);
    const storage = new Storage(dtype, data);
    // Never into the released-buffer pool: that memory would serve ordinary tensors.
    storage.expose();
    this.storages.add(storage);
    if (bytes > 0) this.live.push(new WeakRef(data));
    return storage;
  }

  /** A contiguous tensor of zeros in the file. */
  zeros(shape: readonly number[], dtype: DType = "float32"): Tensor {
    return new Tensor(this.allocate(dtype, shape.reduce((a, b) => a * b, 1)), shape);
  }

  /** Whether `t`'s memory is in this file. */
  holds(t: Tensor): boolean {
    return this.storages.has(t.storage);
  }

  /** Drops the whole pages of `t`'s elements from the process (when t is in this file); returns the bytes dropped. */
  release(t: Tensor | null | undefined): number {
    if (!t || !this.holds(t) || t.numel === 0) return 0;
    const data = t.storage.data.subarray(t.offset, t.offset + t.numel) as TypedArray;
    return native!.mappedRelease(data, this.pageOut);
  }

  /**
   * Faults `t`'s pages in with one call, ready for writing when `write` (when t is in this file):
   * about 4× less CPU than the page-by-page faults of a kernel walking it (ext4 prepares every page
   * for writing on its first write fault).
   */
  populate(t: Tensor | null | undefined, write: boolean): void {
    if (!t || !this.holds(t) || t.numel === 0) return;
    native!.mappedPopulate(t.storage.data.subarray(t.offset, t.offset + t.numel) as TypedArray, write);
  }

  /** Drops every live tensor of the file from the process. */
  releaseAll(): number {
    let n = 0;
    for (const data of this.liveArrays()) n += native!.mappedRelease(data, this.pageOut);
    return n;
  }

  stats(): MappedFileStats {
    let mappedBytes = 0;
    let residentBytes = 0;
    for (const data of this.liveArrays()) {
      mappedBytes += data.byteLength;
      residentBytes += native!.mappedResident(data);
    }
    return { mappedBytes, fileBytes: this.end, residentBytes };
  }

  /** Removes the file. Tensors already in it stay valid (their mappings keep the data) but no new ones come. */
  close(): void {
    if (this.handle === null) return;
    open.delete(this);
    native!.mappedClose(this.handle);
    this.handle = null;
    try {
      unlinkSync(this.path);
    } catch {
      // Already removed by someone else: nothing left to do.
    }
  }

  private liveArrays(): TypedArray[] {
    const out: TypedArray[] = [];
    for (let i = this.live.length - 1; i >= 0; i--) {
      const data = this.live[i].deref();
      if (data) out.push(data);
      else this.live.splice(i, 1);
    }
    return out;
  }
}

/** Removes offload files in `dir` left by processes that no longer exist (a crash skips the exit hook). */
function sweepStale(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new Error(`MappedFile: cannot read the offload directory ${dir}: ${(err as Error).message}`);
  }
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m || alive(Number(m[1]))) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // Another process removed it first.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Where tensors made like a parameter go (its optimizer state), and whose memory an update may drop after it. */
export interface OffloadHome {
  file: MappedFile;
  /** zerosLike(p) (the optimizer's state) is made in the file. */
  state: boolean;
}

const homes = new WeakMap<Tensor, OffloadHome>();

/** Makes `t` offloaded: state made like it goes to the file (when `state`), and the optimizer steps it alone, then drops its pages. */
export function setOffloadHome(t: Tensor, home: OffloadHome | null): void {
  if (home) homes.set(t, home);
  else homes.delete(t);
}

export function offloadHomeOf(t: Tensor): OffloadHome | null {
  return homes.get(t) ?? null;
}
