import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * Starts a worker thread on a sibling module given by its URL without extension
 * (`new URL("./writer_worker", import.meta.url)`). Compiled, the module is plain `.js`. Run from
 * source under tsx, it is `.ts`, and a worker does not inherit tsx's loader, so a two-line
 * bootstrap registers it inside the worker before importing the module.
 */
export function spawnModuleWorker(base: URL, options: WorkerOptions = {}): Worker {
  const fromSource = import.meta.url.endsWith(".ts");
  const url = new URL(`${base.href}${fromSource ? ".ts" : ".js"}`);
  if (!fromSource) return new Worker(url, options);
  const tsx = import.meta.resolve("tsx/esm/api");
  const boot =
    `(async () => { const { register } = await import(${JSON.stringify(tsx)}); register(); ` +
    `await import(${JSON.stringify(url.href)}); })().catch((err) => { console.error(err); process.exit(1); });`;
  return new Worker(boot, { ...options, eval: true });
}
