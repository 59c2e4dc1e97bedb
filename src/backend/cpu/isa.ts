import type { NativeKernels } from "./native.js";

export const ISAS = ["portable", "avx2", "avx512"] as const;
export type Isa = (typeof ISAS)[number];

/**
 * Applies RINGTORCH_CPU_ISA (portable | avx2 | avx512 | auto): the kernels are compiled for each
 * instruction set and the addon picks the best the CPU supports; tests force the others. Asking for
 * one this CPU cannot run warns and keeps the best supported, so a forced setting never crashes.
 */
export function applyIsaFromEnv(native: NativeKernels, env: NodeJS.ProcessEnv = process.env): void {
  const wanted = env.RINGTORCH_CPU_ISA?.trim().toLowerCase();
  if (!wanted || wanted === "auto") return;
  if (!(ISAS as readonly string[]).includes(wanted)) {
    throw new RangeError(`RINGTORCH_CPU_ISA must be one of ${ISAS.join(", ")} or auto, got ${JSON.stringify(env.RINGTORCH_CPU_ISA)}.`);
  }
  if (!native.setIsa(wanted)) {
    process.emitWarning(`RINGTORCH_CPU_ISA=${wanted}: this CPU or build cannot run those kernels; using ${native.getIsa()} instead.`, {
      code: "RINGTORCH_CPU_ISA",
    });
  }
}

export const BF16_GEMM_PATHS = ["portable", "avx512bf16"] as const;

/**
 * Applies RINGTORCH_BF16_GEMM (portable | avx512bf16 | auto) to autocast's products, as
 * RINGTORCH_CPU_ISA does to the float32 kernels: by default they take vdpbf16ps wherever the CPU
 * has AVX512_BF16; `portable` rounds the operands into float32 copies and runs the float32 GEMM (the
 * same products, summed in another order), e.g. to compare the two on one machine. Which pays
 * depends on the CPU: on an AMD EPYC (Zen 4) vdpbf16ps does twice an FMA's work and autocast
 * trained the GPT 1.44–1.58× faster than float32; on an Intel Xeon with AMX it ran at about half the
 * float32 kernel's GFLOPS (README, "Benchmarks"), and neither path beat float32 there. An
 * unsupported path warns and keeps the default.
 */
export function applyBf16GemmPathFromEnv(native: NativeKernels, env: NodeJS.ProcessEnv = process.env): void {
  const wanted = env.RINGTORCH_BF16_GEMM?.trim().toLowerCase();
  if (!wanted || wanted === "auto") return;
  if (!(BF16_GEMM_PATHS as readonly string[]).includes(wanted)) {
    throw new RangeError(`RINGTORCH_BF16_GEMM must be one of ${BF16_GEMM_PATHS.join(", ")} or auto, got ${JSON.stringify(env.RINGTORCH_BF16_GEMM)}.`);
  }
  if (!native.bf16GemmPath(wanted)) {
    process.emitWarning(`RINGTORCH_BF16_GEMM=${wanted}: this CPU or build cannot run it; using ${native.bf16GemmPath()} instead.`, {
      code: "RINGTORCH_BF16_GEMM",
    });
  }
}
