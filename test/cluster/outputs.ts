import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** What one task of a scheduler-started job printed. */
export interface TaskOutput {
  stdout: string;
  stderr: string;
}

interface CollectivesReport {
  failures: string[];
  hashes: Record<string, string>;
  transports: string[];
  cases: number;
}

function explain(tasks: TaskOutput[], output: string): string {
  return `${output}\n${tasks.map((t, i) => `--- task ${i}\n${t.stdout}\n${t.stderr}`).join("\n")}`;
}

/**
 * test/distributed/workers/collectives.ts run by a scheduler: each task, knowing only what the
 * scheduler told it, found its rank, and every collective matched the reference on every rank.
 */
export function checkCollectiveReports(code: number | null, tasks: TaskOutput[], n: number, output: string): void {
  assert.equal(code, 0, explain(tasks, output));
  const reports = tasks.map((t) => {
    const line = t.stdout.split("\n").find((l) => l.startsWith("RESULT "));
    assert.ok(line, explain(tasks, output));
    return JSON.parse(line.slice(7)) as CollectivesReport;
  });
  for (const rep of reports) assert.deepEqual(rep.failures, []);
  // Task t is rank t: each reports "self" at its own index and a transport to every other rank.
  reports.forEach((rep, t) => {
    assert.equal(rep.transports.length, n);
    assert.equal(rep.transports[t], "self");
  });
  for (const rep of reports.slice(1)) assert.deepEqual(rep.hashes, reports[0]!.hashes);
  assert.ok(reports[0]!.cases > 250, `only ${reports[0]!.cases} cases ran`);
}

/**
 * examples/ddp_mlp.ts run by a scheduler for 2 epochs: rank 0 reports the held-out error over all
 * n ranks, lower after training than before, and the checkpoint of the last epoch is on disk
 * under the run id the scheduler's job id gave.
 */
export function checkDdpExample(code: number | null, tasks: TaskOutput[], n: number, output: string, cwd: string): void {
  assert.equal(code, 0, explain(tasks, output));
  const m = /test MSE ([\d.]+) → ([\d.]+) \(1024 held-out samples over (\d+) ranks\)/.exec(tasks[0]!.stdout);
  assert.ok(m, explain(tasks, output));
  assert.equal(Number(m[3]), n);
  assert.ok(Number(m[2]) < Number(m[1]) / 2, `training did not lower the error: ${m[0]}`);
  for (const t of tasks.slice(1)) assert.doesNotMatch(t.stdout, /test MSE/, "only rank 0 reports");
  const runs = /runs in (\S+):/.exec(tasks[0]!.stdout);
  assert.ok(runs, explain(tasks, output));
  const checkpoints = join(cwd, runs[1]!, "checkpoints");
  assert.ok(existsSync(checkpoints) && readdirSync(checkpoints).length > 0, `no checkpoint in ${checkpoints}`);
}

/**
 * test/cluster/workers/dies.ts's outcome: rank `dead` died inside all-reduce #2, and every other
 * rank ended with ringtorch's DistributedError for it. A rank next to the dead one in the ring
 * says it exited (with the pid it printed); one further along may instead hear first that its
 * neighbour gave up, and then names the dead rank as the one that never arrived.
 */
export function checkDeathReported(tasks: TaskOutput[], dead: number, output: string, options: { othersMayFinish?: boolean } = {}): void {
  const all = explain(tasks, output);
  const pid = /READY \d+ (\d+)/.exec(tasks[dead]!.stdout)?.[1];
  assert.ok(pid, all);
  const exited = `rank ${dead} \\(pid ${pid}\\) exited`;
  tasks.forEach((t, rank) => {
    if (rank === dead) return;
    // On Open MPI's own all-reduce the dying rank's MPI thread (native/mpi/mpi_thread.cc, never
    // joined) can go on moving its data while its process tears down after process.exit(), so a
    // rank whose whole share arrived by then completes the collective (seen once, session 17's CI:
    // rank 2 finished while rank 0 reported rank 1's exit); the others must still end with the error.
    if (options.othersMayFinish && t.stdout.includes(`rank ${rank} finished`)) return;
    assert.match(t.stderr, new RegExp(`DistributedError: allReduce #2 failed on rank ${rank}: (${exited}|.*Ranks that never arrived at it: (\\d+, )*${dead}\\b)`), all);
  });
  assert.ok(tasks.some((t) => new RegExp(`DistributedError: allReduce #2 failed on rank \\d+: ${exited}`).test(t.stderr)), all);
}
