import type { Module } from "../../nn/module.js";
import { clone, zeros } from "../../ops/creation.js";
import { noGrad } from "../../autograd/grad_mode.js";
import type { Optimizer } from "../../optim/optimizer.js";
import { Tensor } from "../../tensor/tensor.js";
import { formatShape } from "../../tensor/shape.js";
import { checkArity, checkOptions } from "../../util/options.js";
import { load } from "../../checkpoint/load.js";
import { verifyCheckpoint } from "../../checkpoint/manifest.js";
import type { FsdpParam } from "./param.js";
import { statesUnder } from "./tree.js";
import { getRank } from "../../distributed/init.js";

/** Where a saved shard lies in its parameter: the global shape and the rows it holds. */
export interface ShardMeta {
  shape: number[];
  rowStart: number;
  rows: number;
}

/** One rank's part of a sharded checkpoint: shard tensors by name, and where each lies. */
export interface ShardedState {
  [key: string]: unknown;
  meta: Record<string, ShardMeta>;
  model: Record<string, Tensor>;
  /** Per parameter, the optimizer's row-sharded state (tensors shaped like the shard) and its numbers. */
  optimizer: Record<string, Record<string, Tensor | number>>;
}

/** Every FSDP parameter under `module` by its dotted name there (the names module.namedParameters() gives). */
function fsdpParamsByName(module: Module, where: string): Map<string, FsdpParam> {
  const byShard = new Map<Tensor, FsdpParam>();
  for (const s of statesUnder(module, where)) for (const fp of s.unit.params) byShard.set(fp.shard, fp);
  const out = new Map<string, FsdpParam>();
  for (const [name, p] of module.namedParameters()) {
    const fp = byShard.get(p);
    if (fp) out.set(name, fp);
  }
  return out;
}

function metaOf(fp: FsdpParam): ShardMeta {
  const sharded = fp.layout.size > 1;
  return { shape: [...fp.unsharded.shape], rowStart: sharded ? fp.rowStart : 0, rows: sharded ? fp.layout.rowsOf(fp.shardRank) : fp.layout.rows };
}

/**
 * This rank's shards with their global offsets, and the optimizer's state for them: pass it as
 * checkpoint.save's `sharded` state, so that every rank writes its own files.
 *
 *   await checkpoint.save(dir, { step }, { step, sharded: fsdp.shardedStateDict(model, opt) });
 */
export function shardedStateDict(module: Module, optimizer?: Optimizer<{ lr: number }>): ShardedState {
  checkArity("fsdp.shardedStateDict", arguments, 2, "fsdp.shardedStateDict(model, optimizer)");
  const out: ShardedState = { meta: {}, model: {}, optimizer: {} };
  for (const [name, fp] of fsdpParamsByName(module, "fsdp.shardedStateDict")) {
    out.meta[name] = metaOf(fp);
    out.model[name] = fp.shard.detach();
    const state = optimizer?.state.get(fp.shard);
    if (state) {
      const entry: Record<string, Tensor | number> = {};
      for (const [k, v] of Object.entries(state)) if (v instanceof Tensor || typeof v === "number") entry[k] = v instanceof Tensor ? v.detach() : v;
      out.optimizer[name] = entry;
    }
  }
  return out;
}

/**
 * Loads a sharded checkpoint written on any number of ranks into this rank's shards (and the
 * optimizer's state for them): the saved ranks' files are read one at a time, and the rows each
 * holds that fall in this rank's rows are copied, so no rank holds more than one saved shard of
 * the model at once. Every row of every parameter must be covered, or nothing is left half loaded
 * unnoticed: the error names the parameter and the rows missing.
 */
export function loadShardedStateDict(module: Module, dir: string, options: { optimizer?: Optimizer<{ lr: number }> } = {}): void {
  const where = "fsdp.loadShardedStateDict";
  checkArity(where, arguments, 3, "fsdp.loadShardedStateDict(model, dir, { optimizer })");
  checkOptions(where, options, ["optimizer"]);
  const params = fsdpParamsByName(module, where);
  const manifest = verifyCheckpoint(dir);
  const covered = new Map<string, Uint8Array>();
  for (const [name, fp] of params) covered.set(name, new Uint8Array(metaOf(fp).rows));
  for (let r = 0; r < manifest.worldSize; r++) {
    const saved = load(dir, { rank: r }).sharded as unknown as ShardedState | null;
    if (!saved) throw new Error(`${where}: ${dir} holds no sharded state for saved rank ${r} of ${manifest.worldSize}; it was not saved with fsdp.shardedStateDict`);
    for (const [name, fp] of params) {
      const meta = saved.meta[name];
      if (!meta) throw new Error(`${where}: saved rank ${r} has no shard of ${name}`);
      if (meta.shape.join() !== fp.unsharded.shape.join()) throw new Error(`${where}: ${name} was saved with shape ${formatShape(meta.shape)}, the model has ${formatShape(fp.unsharded.shape)}`);
      const mine = metaOf(fp);
      const lo = Math.max(mine.rowStart, meta.rowStart);
      const hi = Math.min(mine.rowStart + mine.rows, meta.rowStart + meta.rows);
      if (hi <= lo) continue;
      const copyRows = (dst: Tensor, src: Tensor) => noGrad(() => dst.narrow(0, lo - mine.rowStart, hi - lo).copy_(src.narrow(0, lo - meta.rowStart, hi - lo)));
      const rowsView = (t: Tensor) => (fp.unsharded.ndim === 0 && fp.layout.size === 1 ? t.view([1]) : t);
      copyRows(rowsView(fp.shard.detach()), rowsView(saved.model[name]));
      covered.get(name)!.fill(1, lo - mine.rowStart, hi - mine.rowStart);
      const opt = options.optimizer;
      const entry = saved.optimizer?.[name];
      if (opt && entry) {
        const state = opt.state.get(fp.shard) ?? {};
        for (const [k, v] of Object.entries(entry)) {
          if (v instanceof Tensor) {
            const cur = state[k];
            const dst = cur instanceof Tensor ? cur : (state[k] = zeros(fp.shard.shape, { dtype: v.dtype }));
            copyRows(rowsView(dst), rowsView(v));
          } else state[k] = v;
        }
        opt.state.set(fp.shard, state);
      }
    }
  }
  for (const [name, rows] of covered) {
    const missing = rows.indexOf(0);
    if (missing >= 0) {
      const start = params.get(name)!.rowStart + missing;
      throw new Error(`${where}: the shards in ${dir} do not cover ${name}: row ${start} (of this rank's rows) is in no saved rank's shard; the checkpoint is incomplete`);
    }
  }
}

/**
 * The whole model's state dict, gathered unit by unit to rank 0 (torch's FULL_STATE_DICT with
 * rank0_only): parameters under their original names, buffers beside them. Other ranks take part
 * in the gathers and get an empty object. Export it for PyTorch with serialization.save.
 */
export function fullStateDict(module: Module): Record<string, Tensor> {
  checkArity("fsdp.fullStateDict", arguments, 1, "fsdp.fullStateDict(model)");
  const states = statesUnder(module, "fsdp.fullStateDict");
  const params = fsdpParamsByName(module, "fsdp.fullStateDict");
  const rank0 = getRank() === 0;
  const full = new Map<FsdpParam, Tensor>();
  for (const s of states) {
    const wasUnsharded = s.unit.isUnsharded;
    s.unit.unshard("forward");
    if (rank0) for (const fp of s.unit.params) full.set(fp, clone(fp.unsharded.detach()));
    if (!wasUnsharded) s.unit.reshard();
  }
  const out: Record<string, Tensor> = {};
  if (!rank0) return out;
  for (const [name, t] of Object.entries(module.stateDict())) {
    const fp = params.get(name);
    out[name] = fp ? full.get(fp)! : t;
  }
  return out;
}
