import { join, resolve } from "node:path";
import { checkArity, checkOptions } from "../util/options.js";
import { getRngState } from "../tensor/random.js";
import type { Tensor } from "../tensor/tensor.js";
import { clone } from "../ops/creation.js";
import { safetensorsChunks } from "../serialization/io.js";
import { AsyncCheckpointWriter } from "./async_writer.js";
import { prune, stepDirName } from "./directory.js";
import { readSmallFile } from "./files.js";
import { checkManifestFile, FORMAT_VERSION, rememberVerified, type Manifest, type ManifestFile } from "./manifest.js";
import { splitState } from "./state_split.js";
import { runWriteJob, writeFiles, type FileToWrite, type WriteJob } from "./write_dir.js";
import { distributedContext, type DistributedContext } from "./world.js";
import { TID_TRAIN, traceNow, traceSpan, tracing } from "../util/trace.js";
import { checkpointRunId } from "./run_id.js";

export const STATE_FILE = "state.json";

export interface SaveOptions {
  /** The training step this checkpoint captures; it names the directory (step_00000042). */
  step: number;
  /**
   * Write in a background thread: the call returns once the tensors are copied, and the
   * returned promise resolves when the checkpoint is on disk. Default false.
   */
  async?: boolean;
  /** Keep only the newest N complete checkpoints (default: keep all). */
  keepLast?: number;
  /**
   * State that differs per rank (a shard of a sharded model or optimizer). Every rank writes its
   * own `rank_<r>.*` files; rank 0 writes the replicated state and the manifest last.
   */
  sharded?: Record<string, unknown>;
  /** Overrides the distributed rank, world size and barrier (default: the process group, else one process). */
  world?: Partial<DistributedContext>;
}

/** Things with a stateDict() (modules, optimizers, schedulers, samplers) are saved through it. */
function toSavable(state: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(state)) {
    const sd = v && typeof v === "object" && "stateDict" in v && typeof (v as { stateDict: unknown }).stateDict === "function";
    out[k] = sd ? (v as { stateDict(): unknown }).stateDict() : v;
  }
  return out;
}

/**
 * Encodes tensor groups and the JSON state into file chunks. With `snapshots`, tensors are copied
 * (an async write must not see later training steps) and the copies are collected so that their
 * memory can go back to the pool once written: the next save then copies into warm pages.
 */
function prepareFiles(state: Record<string, unknown>, prefix: string, snapshots: Tensor[] | null): FileToWrite[] {
  const { json, files } = splitState(state);
  const out: FileToWrite[] = [];
  for (const [file, tensors] of files) {
    const snapshot = new Map<string, Tensor>();
    for (const [name, t] of tensors) {
      // Without a snapshot the file is written now, straight from the tensor's memory.
      const copy = snapshots ? clone(t.detach()) : t;
      snapshots?.push(copy);
      snapshot.set(name, copy);
    }
    out.push({ name: `${prefix}${file}.safetensors`, chunks: safetensorsChunks(snapshot) });
  }
  out.push({ name: `${prefix}${STATE_FILE}`, chunks: [new TextEncoder().encode(JSON.stringify(json))] });
  return out;
}

let writer: AsyncCheckpointWriter | null = null;

/**
 * Saves a training state under `root/step_<step>/`: tensors in safetensors files (the model's
 * with PyTorch's names), everything else in JSON, the RNG state included, and the manifest with
 * checksums last. Values with a stateDict() method (module, optimizer, scheduler, sampler) are
 * saved through it.
 *
 * Across ranks: replicated state is written by rank 0 alone; with a synchronous save the other
 * ranks wait until it is on disk. They wait on a notice through the job's store, not a
 * collective, so the PyTorch habit `if (rank === 0) await checkpoint.save(…)` (torch.save on rank
 * 0) works too: rank 0 saves and no other rank is expected. Sharded state is written by every
 * rank and needs every rank to call save (they meet at barriers).
 */
export async function save(root: string, state: Record<string, unknown>, options: SaveOptions): Promise<Manifest | null> {
  checkArity("checkpoint.save", arguments, 3, "checkpoint.save(dir, { model, optimizer, … }, { step, async, keepLast, sharded })");
  if (!tracing.on) return saveUntraced(root, state, options);
  const t0 = traceNow();
  try {
    return await saveUntraced(root, state, options);
  } finally {
    traceSpan(TID_TRAIN, "checkpoint.save", t0, { step: options?.step ?? -1 });
  }
}

async function saveUntraced(root: string, state: Record<string, unknown>, options: SaveOptions): Promise<Manifest | null> {
  if (options === undefined || options === null) throw new TypeError("checkpoint.save: options with the step are required, e.g. checkpoint.save(dir, { model, optimizer }, { step: 100 })");
  checkOptions("checkpoint.save", options, ["step", "async", "keepLast", "sharded", "world"]);
  if (!state || typeof state !== "object" || Array.isArray(state)) throw new TypeError("checkpoint.save: the state must be an object such as { model, optimizer, epoch }");
  const { step } = options;
  if (!Number.isInteger(step) || step < 0) throw new RangeError(`checkpoint.save: step must be a non-negative integer, got ${step}`);
  if (options.keepLast !== undefined && (!Number.isInteger(options.keepLast) || options.keepLast < 1)) {
    throw new RangeError(`checkpoint.save: keepLast must be a positive integer (how many complete checkpoints to keep), got ${options.keepLast}`);
  }
  const world = { ...distributedContext(), ...options.world };
  const dir = join(root, stepDirName(step));
  const asyncWrite = options.async ?? false;
  if (asyncWrite && options.sharded && world.worldSize > 1) {
    throw new Error("checkpoint.save: sharded state across ranks is saved synchronously (the manifest needs every rank's files); drop async");
  }
  // Sharded state: every rank writes its own files and their list, then waits for the others,
  // so that rank 0 can put every rank's files into the manifest it writes last.
  let shardFiles: ManifestFile[] = [];
  if (options.sharded) {
    const prefix = `rank_${String(world.rank).padStart(5, "0")}.`;
    const files = prepareFiles(toSavable(options.sharded), prefix, null);
    if (world.worldSize > 1) {
      writeJsonFile(dir, `${prefix}files.json`, writeFiles(dir, files));
      world.barrier();
      if (world.rank === 0) shardFiles = readShardLists(dir, world.worldSize);
    } else shardFiles = writeFiles(dir, files);
  }
  let result: Manifest | null = null;
  if (world.rank === 0) {
    const snapshots: Tensor[] | null = asyncWrite ? [] : null;
    const job: WriteJob = {
      dir,
      files: prepareFiles({ ...runIdState(), ...toSavable(state), rng: getRngState() }, "", snapshots),
      manifest: { format: "ringtorch-checkpoint", version: FORMAT_VERSION, step, worldSize: world.worldSize, createdAt: new Date().toISOString(), extraFiles: shardFiles },
    };
    if (snapshots) {
      try {
        result = await (writer ??= new AsyncCheckpointWriter()).write(job);
      } finally {
        for (const t of snapshots) t.storage.release();
      }
    } else result = runWriteJob(job);
    // Its writer computed every checksum as it wrote: pruning need not read it back.
    if (result) rememberVerified(dir);
    if (options.keepLast !== undefined) prune(root, options.keepLast);
  }
  if (!asyncWrite && world.worldSize > 1) await waitForRank0(world, dir, options.sharded !== undefined);
  return result;
}

function runIdState(): Record<string, string> {
  const runId = checkpointRunId();
  return runId === null ? {} : { runId };
}

/** How many synchronous saves of each directory this process has made: the n-th save on rank 0 announces `#n`. */
const savesOf = new Map<string, number>();

/**
 * After a synchronous save: the other ranks must not go on (or read the checkpoint) before rank 0
 * has written it. With the store's notices, rank 0 announces its n-th save of a directory and a
 * rank that also called save waits for that announcement; a rank that did not call save is not
 * involved. Rank 0 never waits for the others, so a save called on rank 0 alone completes.
 */
async function waitForRank0(world: DistributedContext, dir: string, sharded: boolean): Promise<void> {
  if (sharded || !world.announce || !world.awaitAnnouncement) {
    world.barrier();
    return;
  }
  const base = resolve(dir);
  const n = (savesOf.get(base) ?? 0) + 1;
  savesOf.set(base, n);
  const key = `${base}#${n}`;
  if (world.rank === 0) await world.announce(key);
  else await world.awaitAnnouncement(key);
}

function writeJsonFile(dir: string, name: string, value: unknown): void {
  writeFiles(dir, [{ name, chunks: [new TextEncoder().encode(JSON.stringify(value))] }]);
}

function readShardLists(dir: string, worldSize: number): ManifestFile[] {
  const all: ManifestFile[] = [];
  for (let r = 0; r < worldSize; r++) {
    const name = `rank_${String(r).padStart(5, "0")}.files.json`;
    const list = JSON.parse(new TextDecoder().decode(readSmallFile(dir, name, 64 * 1024 * 1024))) as unknown;
    if (!Array.isArray(list)) throw new Error(`checkpoint ${dir}: ${name} is not a list of files`);
    for (const f of list) checkManifestFile(dir, f, name);
    all.push(...(list as ManifestFile[]));
  }
  return all;
}

/** Resolves when every asynchronous save started by this process has reached the disk. */
export function flush(): Promise<void> {
  return writer ? writer.flush() : Promise.resolve();
}
