import { clone, to } from "../ops/creation.js";
import { contiguousData } from "../ops/util.js";
import type { Tensor } from "../tensor/tensor.js";

/**
 * float32 master copies of bfloat16 parameters. The optimizers update the master (bfloat16 has 8
 * bits of mantissa, so lr·update below 1/256 of a weight would round away) and write the rounded
 * result back into the parameter. State (exp_avg, …) is keyed by the master, in float32.
 *
 * A parameter changed from outside (a loaded checkpoint, an in-place edit) bumps its storage
 * version; the master is then taken again from the parameter.
 */
export class MasterWeights {
  private readonly masters = new Map<Tensor, { master: Tensor; version: number }>();
  private readonly owners = new Map<Tensor, Tensor>();

  /** The master of a bfloat16 parameter, made (or refreshed) from its current values. */
  masterOf(p: Tensor): Tensor {
    const entry = this.masters.get(p);
    if (entry && entry.version === p.storage.version) return entry.master;
    if (entry) {
      const f = contiguousData(p.detach(), "float32");
      entry.master.storage.data.set(f.storage.data.subarray(f.offset, f.offset + p.numel), entry.master.offset);
      entry.version = p.storage.version;
      return entry.master;
    }
    return this.adopt(p, to(p.detach(), "float32"));
  }

  /** Installs `values` (float32, e.g. from a state dict) as p's master. */
  adopt(p: Tensor, values: Tensor): Tensor {
    const old = this.masters.get(p);
    if (old) this.owners.delete(old.master);
    const master = clone(to(values.detach(), "float32")).detach();
    this.masters.set(p, { master, version: p.storage.version });
    this.owners.set(master, p);
    return master;
  }

  /** The parameter a master belongs to, or undefined for any other tensor. */
  ownerOf(t: Tensor): Tensor | undefined {
    return this.owners.get(t);
  }

  /** The group's parameters with each bfloat16 one replaced by its master, whose grad is the parameter's in float32. */
  substitute(params: readonly Tensor[]): Tensor[] {
    return params.map((p) => {
      if (p.dtype !== "bfloat16") return p;
      const master = this.masterOf(p);
      master.grad = p.grad ? to(p.grad.detach(), "float32") : null;
      return master;
    });
  }

  /** Rounds the updated masters back into their bfloat16 parameters, then drops the float32 grads. */
  writeBack(params: readonly Tensor[]): void {
    for (const p of params) {
      const entry = p.dtype === "bfloat16" ? this.masters.get(p) : undefined;
      if (!entry || !entry.master.grad) continue;
      entry.master.grad = null;
      const rounded = to(entry.master, "bfloat16");
      p.storage.data.set(rounded.storage.data.subarray(rounded.offset, rounded.offset + p.numel), p.offset);
      p.storage.version++;
      entry.version = p.storage.version;
    }
  }
}
