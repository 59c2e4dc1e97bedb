import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Backend } from "./backend.js";
import { referenceBackend } from "./reference/index.js";
import { createCpuBackend, type NativeAddon } from "./cpu/index.js";

export type { Backend } from "./backend.js";
export type BackendName = "cpu" | "reference";

let addon: NativeAddon | null | undefined;
let addonError: string | null = null;
let cpu: Backend | null = null;
let active: Backend | null = null;
let warned = false;

/** Finds build/Release/ringtorch.node from src/backend or dist/backend. */
function addonPath(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const candidate = join(dir, "build", "Release", "ringtorch.node");
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return null;
}

/** The native addon, or null if it was not built or cannot load here (the reason is kept). */
export function loadAddon(): NativeAddon | null {
  if (addon !== undefined) return addon;
  if (process.env.RINGTORCH_BACKEND === "reference") {
    addonError = "RINGTORCH_BACKEND=reference";
    return (addon = null);
  }
  const path = addonPath();
  if (!path) {
    addonError = "build/Release/ringtorch.node was not found (run `npm run build:native`)";
    return (addon = null);
  }
  try {
    addon = createRequire(import.meta.url)(path) as NativeAddon;
  } catch (err) {
    addonError = `loading ${path} failed: ${(err as Error).message}`;
    addon = null;
  }
  return addon;
}

export function nativeUnavailableReason(): string | null {
  loadAddon();
  return addonError;
}

function warnOnce(): void {
  if (warned || process.env.RINGTORCH_BACKEND === "reference") return;
  warned = true;
  process.emitWarning(`ringtorch: the native addon is unavailable (${addonError}); running on the slow reference backend.`, {
    code: "RINGTORCH_NO_NATIVE",
  });
}

/** The backend ops dispatch to: `cpu` when the addon loads, else `reference` (with one warning). */
export function getBackend(): Backend {
  if (active) return active;
  const native = loadAddon();
  if (native) {
    active = cpu ??= createCpuBackend(native);
  } else {
    warnOnce();
    active = referenceBackend;
  }
  return active;
}

/** Switches every later op to the named backend (tests compare `cpu` against `reference`). */
export function setBackend(name: BackendName): void {
  if (name === "reference") {
    active = referenceBackend;
    return;
  }
  const native = loadAddon();
  if (!native) throw new Error(`setBackend("cpu"): the native addon is unavailable: ${addonError}`);
  active = cpu ??= createCpuBackend(native);
}

export function backendName(): BackendName {
  return getBackend() === referenceBackend ? "reference" : "cpu";
}

/** Runs fn with the named backend active, restoring the previous one afterwards. */
export function withBackend<T>(name: BackendName, fn: () => T): T {
  const previous = getBackend();
  setBackend(name);
  try {
    return fn();
  } finally {
    active = previous;
  }
}
