#!/usr/bin/env node
// ringtorch's command line: `ringtorch report <experiment dir>`. In a checkout (tsconfig.json
// beside package.json) it runs the TypeScript sources through tsx; an installed package runs dist/.
import { existsSync } from "node:fs";

const root = new URL("../", import.meta.url);
const built = new URL("dist/track/report/cli.js", root);
let main;
if (existsSync(built) && !existsSync(new URL("tsconfig.json", root))) {
  ({ main } = await import(built.href));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import(new URL("src/track/report/cli.ts", root).href));
}
process.exit(await main(process.argv.slice(2)));
