import type { NativeKernels } from "./native.js";

export const ISAS = ["portable", "avx2", "avx512"] as const;
export type Isa = (typeof ISAS)[number];

export const BF16_GEMM_PATHS = ["portable", "avx512bf16", "amx"] as const;

/**
 * Applies a kernel choice from the environment: unset or "auto" leaves the addon's own pick, a name
 * outside `choices` throws, and one this CPU or build cannot run warns and keeps the addon's pick,
 * so a forced setting never crashes a job.
 */
function applyChoiceFromEnv(
  variable: string,
  choices: readonly string[],
  select: (name: string) => boolean,
  current: () => string,
  cannot: string,
  env: NodeJS.ProcessEnv,
): void {
  const wanted = env[variable]?.trim().toLowerCase();
  if (!wanted || wanted === "auto") return;
  if (!choices.includes(wanted)) {
    throw new RangeError(`${variable} must be one of ${choices.join(", ")} or auto, got ${JSON.stringify(env[variable])}.`);
  }
  if (!select(wanted)) process.emitWarning(`${variable}=${wanted}: ${cannot}; using ${current()} instead.`, { code: variable });
}

/**
 * Applies RINGTORCH_CPU_ISA (portable | avx2 | avx512 | auto): the kernels are compiled for each
 * instruction set and the addon picks the best the CPU supports; tests force the others.
 */
export function applyIsaFromEnv(native: NativeKernels, env: NodeJS.ProcessEnv = process.env): void {
  applyChoiceFromEnv("RINGTORCH_CPU_ISA", ISAS, (n) => native.setIsa(n), () => native.getIsa(), "this CPU or build cannot run those kernels", env);
}

/**
 * Applies RINGTORCH_BF16_GEMM (portable | avx512bf16 | amx | auto) to autocast's products, as
 * RINGTORCH_CPU_ISA does to the float32 kernels: by default they take AMX tiles (tdpbf16ps) where the
 * CPU has AMX-BF16 and Linux grants the tile state, else vdpbf16ps where it has AVX512_BF16 (both
 * only while the float32 kernels are avx512); `portable` rounds the operands into float32 copies and
 * runs the float32 GEMM (the same products, summed in another order), e.g. to compare paths on one
 * machine. Which pays depends on the CPU: on an AMD EPYC (Zen 4) vdpbf16ps does twice an FMA's work
 * and autocast trained the GPT 1.44–1.58× faster than float32; on an Intel Xeon with AMX vdpbf16ps
 * ran at about half the float32 kernel's GFLOPS and AMX many times it (README, "Benchmarks").
 */
export function applyBf16GemmPathFromEnv(native: NativeKernels, env: NodeJS.ProcessEnv = process.env): void {
  applyChoiceFromEnv("RINGTORCH_BF16_GEMM", BF16_GEMM_PATHS, (n) => native.bf16GemmPath(n), () => native.bf16GemmPath(), "this CPU or build cannot run it", env);
}
