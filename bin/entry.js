// Runs one of ringtorch's command lines. In a checkout (tsconfig.json beside package.json) it runs
// the TypeScript sources through tsx; an installed package runs the build in dist/. So does a
// checkout under scripts/run-tests.js when it found dist/ up to date with src/ (it then sets
// RINGTORCH_TEST_CHILD_JS): the tests start ringrun as a user's install runs it, without tsx's
// module-hook thread, which costs each start 1-2 s of CPU and, short of file descriptors, fails
// or hangs in tsx's own loading before ringrun's first line (test/security/launch_emfile.test.ts).
import { existsSync } from "node:fs";

/** Imports `main` from dist/<module>.js or src/<module>.ts and exits with what it returns for the arguments. */
export async function runEntry(module) {
  const root = new URL("../", import.meta.url);
  const built = new URL(`dist/${module}.js`, root);
  let main;
  const checkout = existsSync(new URL("tsconfig.json", root));
  if (existsSync(built) && (!checkout || process.env.RINGTORCH_TEST_CHILD_JS)) {
    ({ main } = await import(built.href));
  } else {
    const { register } = await import("tsx/esm/api");
    register();
    ({ main } = await import(new URL(`src/${module}.ts`, root).href));
  }
  process.exit(await main(process.argv.slice(2)));
}
