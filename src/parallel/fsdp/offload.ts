import { getRank, isInitialized } from "../../distributed/init.js";
import type { Module } from "../../nn/module.js";
import type { DType } from "../../tensor/dtype.js";
import { MappedFile, type MappedFileStats } from "../../tensor/mapped.js";
import { checkOptions } from "../../util/options.js";
import { statesUnder } from "./tree.js";

/**
 * Where FSDP keeps this rank's shards outside the compute pool: in a memory-mapped file of `dir`
 * (what PyTorch's CPUOffload does with host memory for GPU training; here ZeRO-Infinity's idea
 * with the kernel as the pager), so that parameters, gradients and optimizer state larger than RAM
 * train. The optimizer steps on them in place with its usual kernels, one parameter at a time,
 * dropping each one's pages after its update; each unit's parameter shard is paged in for its
 * all-gather and dropped after it.
 */
export interface OffloadPolicy {
  /** The directory of the files (on a disk, not tmpfs). One file per rank and directory, removed at exit. */
  dir: string;
  /** The flat parameter shards (default true). */
  params?: boolean;
  /** The gradient shards, which the reduce-scatter writes (default true). */
  grads?: boolean;
  /** The optimizer's state for the shards (default true): every zerosLike of a shard, as optimizers make it. */
  optimizerState?: boolean;
  /**
   * Write dropped pages out and evict them from the page cache too (MADV_PAGEOUT), so that they hold
   * no RAM until read again; default false: they leave the process (RSS) and the kernel's page cache
   * keeps them until memory is needed.
   */
  pageOut?: boolean;
}

export interface ResolvedOffload {
  file: MappedFile;
  params: boolean;
  grads: boolean;
  optimizerState: boolean;
}

const KEYS = ["dir", "params", "grads", "optimizerState", "pageOut"];
/** One file per directory (and pageOut) and process, shared by every unit offloaded there. */
const files = new Map<string, MappedFile>();

/** Checks an offload option and opens (or finds) its file; null when nothing is offloaded. */
export function resolveOffload(where: string, offload: OffloadPolicy | undefined, shardsFreed: boolean, dtype: DType): ResolvedOffload | null {
  if (offload === undefined) return null;
  if (!offload || typeof offload !== "object") throw new TypeError(`${where}: offload must be { dir, params, grads, optimizerState, pageOut }, got ${String(offload)}`);
  checkOptions(`${where} offload`, offload, KEYS);
  if (typeof offload.dir !== "string" || offload.dir === "") throw new TypeError(`${where}: offload.dir must be a directory path, got ${JSON.stringify(offload.dir)}`);
  for (const key of ["params", "grads", "optimizerState", "pageOut"] as const) {
    if (offload[key] !== undefined && typeof offload[key] !== "boolean") throw new TypeError(`${where}: offload.${key} must be a boolean, got ${typeof offload[key]}`);
  }
  const params = offload.params ?? true;
  const grads = offload.grads ?? true;
  const optimizerState = offload.optimizerState ?? true;
  if (!params && !grads && !optimizerState) return null;
  if (!shardsFreed) throw new Error(`${where}: offload needs parameters sharded over more than one rank and freed after backward (FULL_SHARD or HYBRID_SHARD); under SHARD_GRAD_OP or NO_SHARD the whole parameters stay in memory`);
  if (dtype !== "float32" && dtype !== "float64") throw new TypeError(`${where}: offload takes float32 or float64 parameters (bfloat16 ones step through float32 masters kept in memory); got ${dtype}; use mixedPrecision.paramDtype for bfloat16 compute`);
  const pageOut = offload.pageOut ?? false;
  const key = `${pageOut}:${offload.dir}`;
  let file = files.get(key);
  if (!file || !file.isOpen) {
    file = new MappedFile(offload.dir, { pageOut, label: isInitialized() ? `fsdp.rank${getRank()}` : "fsdp" });
    files.set(key, file);
  }
  return { file, params, grads, optimizerState };
}

/** The offload files `module`'s units use: what they hold, and how much of it is in memory. */
export function offloadStats(module: Module): MappedFileStats {
  const out: MappedFileStats = { mappedBytes: 0, fileBytes: 0, residentBytes: 0 };
  for (const f of filesOf(module, "fsdp.offloadStats")) {
    const s = f.stats();
    out.mappedBytes += s.mappedBytes;
    out.fileBytes += s.fileBytes;
    out.residentBytes += s.residentBytes;
  }
  return out;
}

/**
 * Removes the offload files of `module`'s units now rather than at exit. The tensors in them stay
 * valid (the mappings keep their data) and training may go on; new optimizer state is then made
 * in memory.
 */
export function closeOffload(module: Module): void {
  for (const f of filesOf(module, "fsdp.closeOffload")) f.close();
}

function filesOf(module: Module, where: string): Set<MappedFile> {
  const out = new Set<MappedFile>();
  for (const s of statesUnder(module, where)) if (s.unit.options.offload) out.add(s.unit.options.offload.file);
  return out;
}
