// Runs one of ringtorch's command lines. In a checkout (tsconfig.json beside package.json) it runs
// the TypeScript sources through tsx; an installed package runs the build in dist/.
import { existsSync } from "node:fs";

/** Imports `main` from dist/<module>.js or src/<module>.ts and exits with what it returns for the arguments. */
export async function runEntry(module) {
  const root = new URL("../", import.meta.url);
  const built = new URL(`dist/${module}.js`, root);
  let main;
  if (existsSync(built) && !existsSync(new URL("tsconfig.json", root))) {
    ({ main } = await import(built.href));
  } else {
    const { register } = await import("tsx/esm/api");
    register();
    ({ main } = await import(new URL(`src/${module}.ts`, root).href));
  }
  process.exit(await main(process.argv.slice(2)));
}
