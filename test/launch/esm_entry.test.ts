// A training script in a project made by `npm init -y` (package.json "type": "commonjs") uses
// top-level await: ringrun must run it as an ES module instead of failing in esbuild's CommonJS output.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runRingrun, tempDir } from "./helpers.js";

test("ringrun runs a .ts script with top-level await in a CommonJS project folder", async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "porter", version: "1.0.0", type: "commonjs" }));
  writeFileSync(join(dir, "helper.ts"), "export const scale: number = 2;\n");
  writeFileSync(
    join(dir, "train.ts"),
    'import { scale } from "./helper";\nconst x: number = await Promise.resolve(21);\nconsole.log(`rank ${process.env.RANK} says ${x * scale}`);\n',
  );
  const r = await runRingrun(["--standalone", "--nproc-per-node", "2", join(dir, "train.ts")]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /Top-level await is currently not supported/);
  for (const rank of [0, 1]) assert.match(r.stdout, new RegExp(`rank ${rank} says 42`));
});

test("a .js script with top-level await in a CommonJS project runs too", async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "porter", version: "1.0.0" }));
  writeFileSync(join(dir, "train.js"), "const x = await Promise.resolve(7);\nconsole.log('value ' + x);\n");
  const r = await runRingrun(["--standalone", "--nproc-per-node", "1", join(dir, "train.js")]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /value 7/);
});
