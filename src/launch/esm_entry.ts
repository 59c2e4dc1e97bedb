/**
 * Loaded with `node --import` into a ringrun worker after tsx: registers esm_entry_hooks for the
 * script being run (process.argv[1]), so that it runs as an ES module. .cjs/.cts scripts are
 * left as CommonJS, as their extension asks.
 */
import { register } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const script = process.argv[1];
if (script && /\.(ts|tsx|mts|js|mjs|jsx)$/.test(script)) {
  const hooks = new URL(import.meta.url.endsWith(".ts") ? "./esm_entry_hooks.ts" : "./esm_entry_hooks.js", import.meta.url);
  register(hooks, { data: { entry: pathToFileURL(resolve(script)).href } });
}
