import { fileURLToPath } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * Starts a worker thread on a module next to the caller. Run from TypeScript sources (tests,
 * `node --import tsx`), a worker does not inherit tsx's loader, so it loads tsx itself; its
 * in-thread require hook starts in about half the time of its ESM loader (which runs on a thread
 * of its own). From the compiled package the .js file starts directly.
 */
export function spawnWorker(url: URL, options: WorkerOptions): Worker {
  if (!url.pathname.endsWith(".ts")) return new Worker(url, options);
  const api = fileURLToPath(import.meta.resolve("tsx/cjs/api")).replace(/\.mjs$/, ".cjs");
  const code = `require(${JSON.stringify(api)}).register(); require(${JSON.stringify(fileURLToPath(url))});`;
  return new Worker(code, { ...options, eval: true });
}

/** The URL of a sibling module, with the caller's own extension (.ts in sources, .js when built). */
export function siblingModule(callerUrl: string, relative: string): URL {
  const ext = callerUrl.endsWith(".ts") ? ".ts" : ".js";
  return new URL(`${relative}${ext}`, callerUrl);
}
