// The README's TypeScript snippets, pasted into a new project as a newcomer would (`npm init -y &&
// npm install <path to ringtorch>`: a CommonJS package.json and ringtorch in node_modules) and run
// with the command they name (`npx ringrun --standalone --nproc-per-node N train.ts`), else under
// ringrun on one rank, which runs a .ts file as an ES module so top-level await works. A snippet
// that is a fragment of the one before it (in a bullet, not starting with an import) or that needs
// a launcher this machine may lack (mpirun) is listed and left out. The snippets are also type
// checked in strict mode against the built declarations, since ringrun runs them without checking.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot, runNode } from "./smoke.js";

interface Snippet {
  readonly line: number;
  readonly code: string;
}

/** Every ```ts block of the README (indented ones in bullets too), with the line its code starts on. */
function readmeSnippets(): Snippet[] {
  const lines = readFileSync(join(repoRoot, "README.md"), "utf8").split("\n");
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```ts\s*$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== "```") end++;
    out.push({ line: start + 1, code: lines.slice(start, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join("\n") + "\n" });
    i = end;
  }
  return out;
}

/** Why a snippet cannot run on its own here, or null. */
function leftOutBecause(s: Snippet): string | null {
  const firstCode = s.code.split("\n").find((l) => l.trim() !== "" && !l.trim().startsWith("//")) ?? "";
  if (!firstCode.startsWith("import ")) return "a fragment that continues the snippet before it";
  if (/backend: "mpi"/.test(s.code)) return "runs under mpirun on 3 ranks";
  return null;
}

test("every self-contained README snippet runs when pasted into a new project", async (t) => {
  const project = mkdtempSync(join(tmpdir(), "ringtorch-readme-"));
  t.after(() => rmSync(project, { recursive: true, force: true }));
  // What `npm init -y` writes (CommonJS), and what `npm install <path>` of a folder makes: a link.
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "paste", version: "1.0.0", type: "commonjs", dependencies: { ringtorch: `file:${repoRoot}` } }, null, 2));
  mkdirSync(join(project, "node_modules"));
  symlinkSync(repoRoot, join(project, "node_modules/ringtorch"), "dir");

  const snippets = readmeSnippets();
  assert.ok(snippets.length >= 10, `found only ${snippets.length} snippets in the README`);
  const standalone = snippets.filter((s) => {
    const why = leftOutBecause(s);
    if (why) t.diagnostic(`README line ${s.line}: left out (${why})`);
    return why === null;
  });
  assert.ok(standalone.length >= 10, `only ${standalone.length} snippets stand alone`);
  for (const s of standalone) {
    const ranks = Number(/--nproc-per-node (\d+)/.exec(s.code.split("\n")[0])?.[1] ?? 1);
    const file = join(project, `snippet_line_${s.line}.ts`);
    writeFileSync(file, s.code);
    const ringrun = join(project, "node_modules/ringtorch/bin/ringrun.js");
    const { code, out } = await runNode([ringrun, "--standalone", "--nproc-per-node", String(ranks), file], project, {}, 120_000);
    assert.equal(code, 0, `README line ${s.line} (${ranks} rank(s)) exited with ${code}:\n${s.code}\n---\n${out.slice(-3000)}`);
  }

  // The declarations come from dist/ (package.json's "types"): checked only where the runner found
  // dist/ up to date with src/ (it then sets RINGTORCH_TEST_CHILD_JS), as after `npm ci`.
  const tsc = join(repoRoot, "node_modules/typescript/bin/tsc");
  if (!process.env.RINGTORCH_TEST_CHILD_JS || !existsSync(tsc)) {
    t.diagnostic("snippets not type checked: dist/ may be stale (run through scripts/run-tests.js after `npm run build`)");
    return;
  }
  symlinkSync(join(repoRoot, "node_modules/@types"), join(project, "node_modules/@types"), "dir");
  const compilerOptions = { target: "es2022", module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, skipLibCheck: true, types: ["node"] };
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["*.mts"] }));
  // .mts: an ES module, as ringrun runs it (top-level await); `export {}` keeps each one a module.
  for (const s of standalone) writeFileSync(join(project, `snippet_line_${s.line}.mts`), `${s.code}export {};\n`);
  const check = spawnSync(process.execPath, [tsc, "-p", project], { cwd: project, encoding: "utf8" });
  assert.equal(check.status, 0, `the README's snippets do not type check:\n${check.stdout}${check.stderr}`);
});
