#!/usr/bin/env node
// ringrun, the torchrun of ringtorch. In a checkout (tsconfig.json beside package.json) it runs the
// TypeScript sources through tsx; an installed package runs the build in dist/.
import { existsSync } from "node:fs";

const root = new URL("../", import.meta.url);
const built = new URL("dist/launch/main.js", root);
let main;
if (existsSync(built) && !existsSync(new URL("tsconfig.json", root))) {
  ({ main } = await import(built.href));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(new URL("src/launch/main.ts", root).href));
}
process.exit(await main(process.argv.slice(2)));
