import type { DType } from "../../tensor/dtype.js";
import { checkOptions } from "../../util/options.js";

/**
 * FSDP's mixed-precision policy (torch.distributed.fsdp.MixedPrecisionPolicy). In ringtorch
 * today bfloat16 is a storage and wire format, not a compute dtype: `paramDtype: "bfloat16"`
 * all-gathers parameters as bfloat16 (half the bytes), and forward and backward then run in
 * float32 on those rounded values; `reduceDtype: "bfloat16"` reduce-scatters gradients as
 * bfloat16 (summed in float32, rounded once). The shards the optimizer steps on stay float32
 * (master weights). When kernels compute in bfloat16, the same policy will keep them bfloat16.
 */
export interface MixedPrecisionPolicy {
  /** The dtype parameters are all-gathered in. Default: the parameter's own. */
  paramDtype?: "float32" | "bfloat16";
  /** The dtype gradients are reduce-scattered in. Default: paramDtype. */
  reduceDtype?: "float32" | "bfloat16";
  /** Buffers stay in the dtype they have: compute is float32, so only "float32" is accepted. */
  bufferDtype?: "float32";
  /** Accepted for PyTorch's spelling; forward outputs are float32 whatever it says. */
  outputDtype?: "float32";
  /** Accepted for PyTorch's spelling: ringtorch computes in float32 already. */
  castForwardInputs?: boolean;
}

export interface ResolvedPolicy {
  paramDtype: DType | null;
  reduceDtype: DType | null;
}

const WIRE = ["float32", "bfloat16"];

/**
 * Checks a policy against the parameters it will apply to; the error names the first parameter
 * it cannot apply to and why.
 */
export function resolvePolicy(where: string, policy: MixedPrecisionPolicy | undefined, params: readonly [string, { dtype: DType }][]): ResolvedPolicy {
  if (policy === undefined) return { paramDtype: null, reduceDtype: null };
  checkOptions(`${where}: mixedPrecision`, policy, ["paramDtype", "reduceDtype", "bufferDtype", "outputDtype", "castForwardInputs"]);
  for (const key of ["paramDtype", "reduceDtype"] as const) {
    const v = policy[key];
    if (v !== undefined && !WIRE.includes(v)) throw new TypeError(`${where}: mixedPrecision.${key} must be "float32" or "bfloat16", got ${JSON.stringify(v)}`);
  }
  for (const key of ["bufferDtype", "outputDtype"] as const) {
    const v = policy[key];
    if (v !== undefined && v !== "float32") {
      throw new TypeError(`${where}: mixedPrecision.${key} ${JSON.stringify(v)} cannot apply: ringtorch computes in float32 (bfloat16 is storage-only today), so buffers and outputs stay float32`);
    }
  }
  const paramDtype = policy.paramDtype ?? null;
  const reduceDtype = policy.reduceDtype ?? paramDtype;
  const lowers = (paramDtype !== null && paramDtype !== "float32") || (reduceDtype !== null && reduceDtype !== "float32");
  if (lowers) {
    for (const [name, p] of params) {
      if (p.dtype !== "float32") {
        throw new TypeError(`${where}: mixedPrecision casts float32 parameters to bfloat16 for communication, but parameter ${name} is ${p.dtype}; keep that module out of the policy or make it float32`);
      }
    }
  }
  return { paramDtype, reduceDtype };
}
