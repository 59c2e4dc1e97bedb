import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { freePort, repoRoot, runRingrun, startRingrun, tempDir, workerFixture } from "../launch/helpers.js";

const shmLeaker = join(repoRoot, "test/security/fixtures/shm_leaker.ts");

/** Every file and folder under `root` (root excluded), with its permission bits. */
function modes(root: string): { path: string; dir: boolean; mode: number }[] {
  const out: { path: string; dir: boolean; mode: number }[] = [];
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    const stat = lstatSync(path);
    out.push({ path, dir: stat.isDirectory(), mode: stat.mode & 0o777 });
    if (stat.isDirectory()) out.push(...modes(path));
  }
  return out;
}

test("ringrun's log folders are 0700 and its log and error files 0600, whatever the umask", async (t) => {
  const out = tempDir(t);
  const logDir = join(out, "logs");
  const jobErrorFile = join(out, "job_error.json");
  // umask 0 would let every default-mode file be world-writable: the modes must not depend on it.
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const running = startRingrun(
      ["--standalone", "--nproc-per-node", "2", "--log-dir", logDir, "--redirects", "3", workerFixture, out, "--throw-rank", "0"],
      { RINGTORCH_ERROR_FILE: jobErrorFile },
      ["sh", "-c", 'umask 0 && exec "$@"', "sh", process.execPath],
    );
    void running.done.then(({ code, stderr }) => resolve({ code, stderr }));
  });
  assert.equal(result.code, 1, result.stderr);
  const written = modes(logDir);
  assert.ok(written.some((f) => f.path.endsWith("error.json")), "the failing worker left its error file");
  assert.ok(written.filter((f) => f.path.endsWith(".log")).length >= 4, "both workers' stdout and stderr logs were written");
  for (const f of written) assert.equal(f.mode.toString(8), f.dir ? "700" : "600", `${f.path}`);
  assert.equal((statSync(logDir).mode & 0o777).toString(8), "700", "the --log-dir folder ringrun created");
  assert.equal((statSync(jobErrorFile).mode & 0o777).toString(8), "600", "ringrun's own error file");
});

for (const runId of [".", "..", "a/b", "../x"]) {
  test(`--rdzv-id ${JSON.stringify(runId)} is refused before anything is deleted`, async (t) => {
    const out = tempDir(t);
    // A sibling of the log folder that `--rdzv-id ..` used to replace as <log-dir>/../attempt_0.
    mkdirSync(join(out, "attempt_0"));
    writeFileSync(join(out, "attempt_0", "keep.txt"), "precious");
    const result = await runRingrun([
      "--nnodes", "1", "--master-port", String(await freePort()), "--rdzv-id", runId, "--log-dir", join(out, "logs"), workerFixture, out,
    ]);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /^ringrun: error: --rdzv-id '.*' must be letters, digits.*not '\.' or '\.\.'/);
    assert.equal(readFileSync(join(out, "attempt_0", "keep.txt"), "utf8"), "precious");
  });
}

test("a rank killed before it unlinked its shared-memory segment does not leave the segment behind", { skip: !existsSync("/dev/shm") }, async (t) => {
  const out = tempDir(t);
  const result = await runRingrun(["--standalone", "--nproc-per-node", "2", shmLeaker, out]);
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /killed by signal SIGKILL|signal {5}: SIGKILL/);
  // The first rank to die makes ringrun stop the other, which may not have reached its segment yet:
  // every segment a rank did create must be gone, and at least one rank created one.
  const recorded = [0, 1].filter((rank) => existsSync(join(out, `segment${rank}`)));
  assert.ok(recorded.length > 0, "no rank recorded a segment");
  for (const rank of recorded) {
    const name = readFileSync(join(out, `segment${rank}`), "utf8");
    assert.ok(!existsSync(`/dev/shm${name}`), `rank ${rank}'s segment ${name} was removed by ringrun`);
  }
});
