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
