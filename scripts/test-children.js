// For scripts/run-tests.js: lets the processes the tests start (ranks, mpirun's tasks, store
// hosts) run as plain JavaScript on the built library in dist/ instead of through tsx.
//
// Why: Node 20 runs module hooks (tsx's, or any module.register hook) on a separate thread, and
// every module a process loads makes a round trip to it: about 1 ms each for the library's ~400
// modules, so a child that loads the library through any hook spends 0.6-2 s of CPU before its
// first line, against 0.3 s without one. Some tests start dozens of such children.
//
// How: each helper script under test/ (not the *.test.ts files: those run in the runner's own
// processes, through tsx) is compiled to a hidden sibling, `.<name>.rt-<run>.mjs`, beside its
// source so that its import.meta.url-relative paths still hold. Its imports of src/ point at
// dist/, its imports of other test helpers at their compiled siblings; nothing else changes, so
// a child loads no hook at all. test/child_node.ts picks the sibling when the runner made one.
//
// Only when dist/ is up to date: every src/**/*.ts has its dist/**/*.js, no older than it (npm ci
// builds dist/ after checking out src/). A developer's stale build is never used: the children
// then load the sources through tsx as before, and the runner says why.
import { createRequire } from "node:module";
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";

/** Why dist/ cannot stand for src/ (a sentence), or null when every source has a fresh build. */
export function staleDist(root) {
  const src = join(root, "src");
  const dist = join(root, "dist");
  for (const file of walk(src)) {
    if (!file.endsWith(".ts") || file.endsWith(".d.ts")) continue;
    const built = join(dist, relative(src, file)).replace(/\.ts$/, ".js");
    if (!existsSync(built)) return `${relative(root, built)} is missing`;
    if (statSync(built).mtimeMs < statSync(file).mtimeMs) return `${relative(root, file)} is newer than ${relative(root, built)}`;
  }
  return null;
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

/** The compiled sibling of test helper `file` for run `runId` (test/child_node.ts names it the same way). */
export function compiledName(file, runId) {
  return join(dirname(file), `.${basename(file, ".ts")}.rt-${runId}.mjs`);
}

/**
 * Compiles every helper script under test/ for run `runId` (see the top of this file) and
 * returns the files written, for removeCompiled. esbuild is tsx's own compiler, resolved from tsx.
 */
export async function compileTestHelpers(root, runId) {
  const testDir = join(root, "test");
  const srcDir = join(root, "src") + sep;
  const distDir = join(root, "dist");
  const entries = [...walk(testDir)].filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts"));
  const esbuild = createRequire(createRequire(join(root, "package.json")).resolve("tsx/package.json"))("esbuild");
  // A helper that imports TypeScript from outside test/ and src/ (examples/lib) needs tsx: it is
  // not compiled, nor is any helper that imports it, and its children keep the sources.
  const needsTsx = new Set();
  const helperImports = new Map();
  // Bundling with every import external only rewrites import paths, with esbuild's own parser.
  const rewrite = {
    name: "ringtorch-test-imports",
    setup(build) {
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        if (args.kind === "entry-point") return undefined;
        const target = resolve(args.resolveDir, args.path);
        let out;
        if (target.startsWith(srcDir)) {
          out = join(distDir, relative(srcDir, target)).replace(/\.ts$/, ".js");
          if (!existsSync(out)) return { errors: [{ text: `${args.path}: ${relative(root, out)} is not built` }] };
        } else {
          const source = target.replace(/\.js$/, ".ts");
          const isTs = source.endsWith(".ts") && existsSync(source) && !existsSync(target);
          if (isTs && !source.startsWith(testDir + sep)) needsTsx.add(args.importer);
          if (isTs) helperImports.set(args.importer, [...(helperImports.get(args.importer) ?? []), source]);
          out = isTs ? compiledName(source, runId) : target;
        }
        const spec = relative(args.resolveDir, out).split(sep).join("/");
        return { path: spec.startsWith("../") ? spec : `./${spec}`, external: true };
      });
      build.onResolve({ filter: /^[^./]/ }, (args) => (args.kind === "entry-point" ? undefined : { path: args.path, external: true }));
    },
  };
  const result = await esbuild.build({
    entryPoints: entries,
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    target: "node20",
    outdir: testDir,
    outbase: testDir,
    outExtension: { ".js": ".mjs" },
    logLevel: "silent",
    plugins: [rewrite],
  });
  for (let grew = true; grew; ) {
    grew = false;
    for (const [file, deps] of helperImports) {
      if (!needsTsx.has(file) && deps.some((d) => needsTsx.has(d))) grew = needsTsx.add(file) !== undefined;
    }
  }
  const written = [];
  for (const out of result.outputFiles) {
    const source = join(testDir, relative(testDir, out.path)).replace(/\.mjs$/, ".ts");
    if (needsTsx.has(source)) continue;
    const path = compiledName(source, runId);
    writeFileSync(path, out.contents);
    written.push(path);
  }
  return written;
}

export function removeCompiled(files) {
  for (const f of files) rmSync(f, { force: true });
}

/** A run id that names the runner's pid, so that a later run can tell its leftovers from a live run's. */
export function newRunId() {
  return `p${process.pid}t${Date.now().toString(36)}`;
}

/**
 * Removes what runs that were killed before their clean-up left under test/: the compiled copies
 * of runs whose runner process is gone. Another run still going in this checkout keeps its own.
 */
export function removeLeftovers(root) {
  for (const file of walk(join(root, "test"))) {
    const pid = /^\.[^/]*\.rt-p(\d+)t[0-9a-z]+\.mjs$/.exec(basename(file))?.[1];
    if (pid !== undefined && !isRunning(Number(pid))) rmSync(file, { force: true });
  }
}

function isRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}
