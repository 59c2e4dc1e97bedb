// scripts/test-children.js: when the test runner may hand the tests' child processes dist/ instead
// of src/, and what its compiled copies of test/ helpers load.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { compileTestHelpers, compiledName, newRunId, removeCompiled, removeLeftovers, staleDist } from "../../scripts/test-children.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** A throwaway project: `files` maps paths to contents, each written with mtime `at` (seconds). */
function project(files: Record<string, [string, number]>): string {
  const root = mkdtempSync(join(tmpdir(), "ringtorch-test-children-"));
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "fake", type: "module" }));
  symlinkSync(join(REPO, "node_modules"), join(root, "node_modules"));
  for (const [path, [text, at]] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
    utimesSync(join(root, path), at, at);
  }
  return root;
}

describe("the test runner's dist/ for child processes", () => {
  it("stands for src/ only when every source has a build no older than it", () => {
    const root = project({ "src/a.ts": ["", 100], "src/sub/b.ts": ["", 100], "src/types.d.ts": ["", 500], "dist/a.js": ["", 200], "dist/sub/b.js": ["", 100] });
    try {
      assert.equal(staleDist(root), null);
      utimesSync(join(root, "src/sub/b.ts"), 300, 300);
      assert.equal(staleDist(root), "src/sub/b.ts is newer than dist/sub/b.js");
      rmSync(join(root, "dist/a.js"));
      assert.equal(staleDist(root), "dist/a.js is missing");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("compiles test/ helpers to siblings that load dist/ and their helpers' copies with no hook; one importing TypeScript from elsewhere is left to tsx", async () => {
    const root = project({
      "src/lib.ts": ['export const where: string = "src";\n', 100],
      "dist/lib.js": ['export const where = "dist";\n', 200],
      "examples/ex.ts": ['export const ex: number = 1;\n', 100],
      "test/helpers/shared.ts": ['import { where } from "../../src/lib.js";\nexport const from: string = `helper on ${where}`;\n', 100],
      "test/main.ts": ['import type { Buffer } from "node:buffer";\nimport { from } from "./helpers/shared.js";\nconst b: Buffer | null = null;\nconsole.log(from, new URL(import.meta.url).pathname.endsWith(".mjs"), b);\n', 100],
      "test/uses_example.ts": ['import { ex } from "../examples/ex.js";\nconsole.log(ex);\n', 100],
      "test/uses_that.ts": ['import "./uses_example.js";\n', 100],
      "test/skipped.test.ts": ['throw new Error("not a helper");\n', 100],
    });
    try {
      const written = await compileTestHelpers(root, "t1");
      assert.deepEqual(written.sort(), [compiledName(join(root, "test/helpers/shared.ts"), "t1"), compiledName(join(root, "test/main.ts"), "t1")].sort());
      assert.equal(compiledName(join(root, "test/main.ts"), "t1"), join(root, "test/.main.rt-t1.mjs"));
      const r = spawnSync(process.execPath, [join(root, "test/.main.rt-t1.mjs")], { cwd: root, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, "helper on dist true null\n");
      removeCompiled(written);
      assert.ok(written.every((f) => !existsSync(f)));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("removes the compiled copies a killed run left, and not those of a run still going", () => {
    const gone = spawnSync(process.execPath, ["-e", ""]).pid;
    assert.ok(gone !== undefined);
    const mine = newRunId();
    assert.match(mine, new RegExp(`^p${process.pid}t[0-9a-z]+$`));
    const root = project({
      [`test/w/.left.rt-p${gone}t1a.mjs`]: ["", 100],
      [`test/w/.live.rt-${mine}.mjs`]: ["", 100],
      "test/w/.hidden.mjs": ["", 100],
      "test/w/helper.ts": ["", 100],
    });
    try {
      removeLeftovers(root);
      assert.equal(existsSync(join(root, `test/w/.left.rt-p${gone}t1a.mjs`)), false);
      for (const kept of [`.live.rt-${mine}.mjs`, ".hidden.mjs", "helper.ts"]) assert.ok(existsSync(join(root, "test/w", kept)), kept);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
