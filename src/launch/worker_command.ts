import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { Entry } from "./launch_config.js";
import { childNodeFlags } from "./young_generation.js";

export interface WorkerCommand {
  readonly command: string;
  readonly args: readonly string[];
}

// Running from the TypeScript sources means running inside this repository (or a checkout of
// it): there `import "ringtorch"` in a worker must resolve to src/ through the "source" export
// condition. An installed ringrun runs from dist/ and leaves the package's normal exports alone.
const fromSource = import.meta.url.endsWith(".ts");
/** The preload every worker imports (error file, watch on its launcher); spawn() uses it too. */
export const workerPreloadUrl = new URL(fromSource ? "./worker_preload.ts" : "./worker_preload.js", import.meta.url).href;
const esmEntryUrl = new URL(fromSource ? "./esm_entry.ts" : "./esm_entry.js", import.meta.url).href;
// Resolved from ringrun's own location so workers find tsx even where the script's folder has none.
const tsxLoaderUrl = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/**
 * The command line of one worker: `node --import tsx --import <preload> script.ts args...`, so a
 * TypeScript script runs without a build step and every worker records its uncaught errors and
 * watches ringrun. -m imports a module specifier resolved from the working directory (what
 * `--eval` code resolves against); --no-python runs the executable as it is. A script file runs
 * as an ES module even in a folder whose package.json is CommonJS (esm_entry.ts), so that the
 * top-level await of a training script works in a project made by `npm init -y`. Workers start
 * without Node's startup snapshot (node_snapshot.ts) unless `keepSnapshot` or the user's flags say,
 * and with the semi-space RINGTORCH_SEMI_SPACE_MB asks for (young_generation.ts).
 */
export function workerCommand(entry: Entry, scriptArgs: readonly string[], keepSnapshot = false): WorkerCommand {
  if (entry.kind === "executable") return { command: entry.command, args: [...scriptArgs] };
  const inherited = entry.kind === "run-path" ? process.execArgv : [];
  const nodeFlags = [
    ...childNodeFlags(inherited, process.env, keepSnapshot),
    ...(fromSource ? ["--conditions=source"] : []),
    "--import", tsxLoaderUrl, "--import", workerPreloadUrl,
  ];
  switch (entry.kind) {
    case "script":
      return { command: process.execPath, args: [...nodeFlags, "--import", esmEntryUrl, entry.path, ...scriptArgs] };
    case "module":
      return { command: process.execPath, args: [...nodeFlags, ...importEntry(entry.specifier, entry.specifier), ...scriptArgs] };
    case "run-path":
      return { command: process.execPath, args: [...inherited, ...nodeFlags, ...importEntry(pathToFileURL(entry.path).href, entry.path), ...scriptArgs] };
  }
}

/** `--eval` code that imports `specifier` with process.argv shaped as if it were the script itself. */
function importEntry(specifier: string, shownAs: string): string[] {
  const code = `process.argv.splice(1, 0, ${JSON.stringify(shownAs)}); await import(${JSON.stringify(specifier)});`;
  return ["--input-type=module", "--eval", code, "--"];
}
