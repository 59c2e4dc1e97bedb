import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LaunchError, openAgentStore, type AgentStore } from "./agent_store.js";
import { describeEnd, failureFromExit, formatFailureSummary, rootCause, type FailureRecord } from "./failure.js";
import { streamsToFile, type LaunchConfig } from "./launch_config.js";
import { Rendezvous, RendezvousError, type JobOutcome, type RoundEnd, type RoundInfo } from "./rendezvous.js";
import { describeSignal, exitCodeForSignal } from "./signals.js";
import { workerCommand } from "./worker_command.js";
import { workerEnvironment } from "./worker_env.js";
import { WorkerGroup, type WorkerSpec } from "./worker_group.js";
import { linePrefix, prepareAttemptDir, workerLogPaths } from "./worker_output.js";

export interface AgentLog {
  /** Progress worth a line unless the user asked for quiet. */
  info(message: string): void;
  /** Always shown: restarts, failures, lost peers. */
  warn(message: string): void;
}

interface RoundResult {
  readonly end: RoundEnd;
  /** This node's failures seen before ringrun stopped the group (the ones it stopped are not failures). */
  readonly local: readonly FailureRecord[];
  readonly attemptDir: string;
}

/**
 * The elastic agent of one node (torchrun's LocalElasticAgent): joins the rendezvous, starts this
 * node's workers, watches them and the other nodes, and on a failure stops the whole group and
 * starts it again in a new round, until it succeeds or --max-restarts is used up.
 */
export class Agent {
  private group: WorkerGroup | undefined;
  private stopSignal: NodeJS.Signals | undefined;
  private abort: () => void = () => {};
  private readonly aborted = new Promise<"aborted">((resolve) => (this.abort = () => resolve("aborted")));

  constructor(
    private readonly config: LaunchConfig,
    private readonly log: AgentLog,
  ) {}

  /** First SIGINT/SIGTERM: stop the workers with the same signal, then SIGKILL after --term-timeout. */
  requestStop(signal: NodeJS.Signals): void {
    this.stopSignal ??= signal;
    this.abort();
  }

  /** Last resort on the way out: SIGKILL every worker group, synchronously. */
  killWorkers(): void {
    this.group?.kill();
  }

  async run(): Promise<number> {
    const { config } = this;
    for (const note of config.notes) this.log.info(note);
    // Connecting retries for up to join_timeout; Ctrl-C must not wait for that.
    const agentStore = await this.unlessStopped(openAgentStore(config));
    if (agentStore === "aborted") return exitCodeForSignal(this.stopSignal!);
    const rdzv = new Rendezvous(agentStore.store, {
      backend: config.backend,
      minNodes: config.minNodes,
      maxNodes: config.maxNodes,
      nodeRank: config.nodeRank,
      timeouts: config.rendezvous,
      host: config.localAddr,
      nproc: config.nprocPerNode,
      endpoint: `${agentStore.host}:${agentStore.port}`,
    });
    // Set once the outcome is in the store: only then is waiting for the others to read it useful.
    let announced = false;
    // torchrun's default too: a temporary folder, worth keeping only if workers ran and the job did not succeed.
    const logDir = config.logDir ?? mkdtempSync(join(tmpdir(), "ringrun_"));
    let keepLogs = false;
    try {
      let next = await this.unlessStopped(rdzv.join());
      for (;;) {
        if (next === "aborted") {
          await rdzv.finish("aborted").catch(() => {});
          return exitCodeForSignal(this.stopSignal!);
        }
        if ("finished" in next) {
          this.log.warn(`the job at ${agentStore.host}:${agentStore.port} already ended (${next.finished}) before this node got a place`);
          return next.finished === "succeeded" ? 0 : 1;
        }
        keepLogs = true;
        const { end, local, attemptDir } = await this.runRound(rdzv, next, agentStore, logDir);
        const info = next;
        if (end.reason === "membership") {
          await this.group!.stop("SIGTERM", config.termTimeoutMs);
          this.log.warn(`nodes are waiting to join; restarting the workers with them (restart count stays ${info.restartCount})`);
          next = await this.unlessStopped(rdzv.join(await rdzv.advance(info.restartCount)));
          continue;
        }
        if (end.reason === "failed" && info.restartCount < config.maxRestarts && this.stopSignal === undefined) {
          await this.group!.stop("SIGTERM", config.termTimeoutMs);
          const root = rootCause([end.failure, ...local])!;
          this.log.warn(
            `worker group failed (rank ${root.rank} on ${root.host}: ${describeEnd(root)}${root.error ? `: ${root.error.type}: ${root.error.message.split("\n")[0]}` : ""}); ` +
              `restarting all workers (restart ${info.restartCount + 1} of ${config.maxRestarts}), logs of the failed attempt in ${attemptDir}`,
          );
          next = await this.unlessStopped(rdzv.join(await rdzv.advance(info.restartCount + 1)));
          continue;
        }
        announced = true;
        keepLogs = end.reason !== "succeeded";
        return await this.finish(rdzv, info, end, local, attemptDir);
      }
    } catch (error) {
      // Typically the store went away (its host died): the workers still get their grace period.
      if (this.group !== undefined && this.group.running > 0) await this.group.stop(this.stopSignal ?? "SIGTERM", config.termTimeoutMs);
      if (error instanceof RendezvousError || agentStore.server !== undefined) throw error;
      throw new LaunchError(`${(error as Error).message} (the job's store is hosted by the ringrun at ${agentStore.host}:${agentStore.port}; without it the job cannot go on)`);
    } finally {
      this.group?.kill();
      if (config.logDir === undefined && !keepLogs) rmSync(logDir, { recursive: true, force: true });
      if (agentStore.server !== undefined && announced) await rdzv.waitForOthersToLeave().catch(() => {});
      // Not awaited: an idle client's close() may wait on an unref'd socket that no longer holds the process.
      void agentStore.store.close().catch(() => {});
      await agentStore.server?.close();
    }
  }

  private async finish(rdzv: Rendezvous, info: RoundInfo, end: Exclude<RoundEnd, { reason: "membership" }>, local: readonly FailureRecord[], attemptDir: string): Promise<number> {
    const outcome: JobOutcome = end.reason === "succeeded" ? "succeeded" : end.reason === "aborted" ? "aborted" : "failed";
    // Tell the others first: the store's host waits for this before it closes.
    await rdzv.finish(outcome).catch(() => {});
    await this.group!.stop(this.stopSignal ?? "SIGTERM", this.config.termTimeoutMs);
    if (end.reason === "succeeded") return 0;
    if (end.reason === "aborted") {
      this.log.warn(end.message);
      return this.stopSignal === undefined ? 1 : exitCodeForSignal(this.stopSignal);
    }
    // The store's copy of a local failure is the same failure: one entry per rank.
    const byRank = new Map([end.failure, ...local].map((f) => [`${f.nodeRank}/${f.rank}`, f]));
    const root = rootCause([...byRank.values()])!;
    const others = [...byRank.values()].filter((f) => f !== root);
    process.stderr.write(
      formatFailureSummary({ runId: this.config.runId, restartCount: info.restartCount, maxRestarts: this.config.maxRestarts, attemptDir, nodeRank: info.nodeRank }, root, others),
    );
    writeJobErrorFile(root);
    return 1;
  }

  private async runRound(rdzv: Rendezvous, info: RoundInfo, agentStore: AgentStore, logDir: string): Promise<RoundResult> {
    const { config } = this;
    const attemptDir = prepareAttemptDir(logDir, config.runId, info.round);
    const specs = Array.from({ length: config.nprocPerNode }, (_, localRank) => this.workerSpec(info, localRank, attemptDir, agentStore));
    this.log.info(
      `node ${info.nodeRank} of ${info.nodes.length}: starting ranks ${info.rankOffset}..${info.rankOffset + config.nprocPerNode - 1} of ${info.worldSize} ` +
        `(run id ${config.runId}, restart ${info.restartCount}, store ${agentStore.host}:${agentStore.port}, logs ${attemptDir})`,
    );
    const group = (this.group = new WorkerGroup(specs));
    const heartbeatMs = Math.min(1000, config.rendezvous.heartbeatTimeoutMs / 3);
    let lastBeat = 0;
    let doneAt: number | undefined;
    const result = (end: RoundEnd, local: FailureRecord[] = []): RoundResult => ({ end, local, attemptDir });
    for (;;) {
      await group.waitForChange(config.monitorIntervalMs);
      if (this.stopSignal !== undefined) {
        const message = `ringrun on ${config.localAddr} (node ${info.nodeRank}) received ${describeSignal(this.stopSignal)}; the job was stopped`;
        return result(await rdzv.endRound({ reason: "aborted", message }).catch(() => ({ reason: "aborted", message }) as const));
      }
      const failures = group.failures();
      if (failures.length > 0) {
        await group.drained();
        const local = failures.map((f) => failureFromExit(f, config.localAddr, info.nodeRank));
        return result(await rdzv.endRound({ reason: "failed", failure: rootCause(local)! }), local);
      }
      if (doneAt === undefined && group.running === 0) {
        doneAt = Date.now();
        await rdzv.markDone();
      }
      const end = await rdzv.roundEnd();
      if (end !== undefined) return result(end);
      if (Date.now() - lastBeat >= heartbeatMs) {
        lastBeat = Date.now();
        const silent = await rdzv.heartbeat();
        if (silent.length > 0) return result(await rdzv.endRound({ reason: "failed", failure: nodeLost(info, silent[0]!, config.rendezvous.heartbeatTimeoutMs) }));
        if (doneAt === undefined && (await rdzv.nodesWaiting())) return result(await rdzv.endRound({ reason: "membership" }));
      }
      if (doneAt !== undefined && Date.now() - doneAt > config.rendezvous.exitBarrierTimeoutMs) {
        this.log.warn(`this node's workers succeeded, but other nodes did not finish within exit_barrier_timeout (${config.rendezvous.exitBarrierTimeoutMs / 1000} s); leaving`);
        return result({ reason: "succeeded" });
      }
    }
  }

  private workerSpec(info: RoundInfo, localRank: number, attemptDir: string, agentStore: AgentStore): WorkerSpec {
    const { config } = this;
    const rank = info.rankOffset + localRank;
    const logs = workerLogPaths(attemptDir, localRank);
    const env = workerEnvironment(process.env, {
      rank,
      localRank,
      groupRank: info.nodeRank,
      worldSize: info.worldSize,
      localWorldSize: config.nprocPerNode,
      groupWorldSize: info.nodes.length,
      role: config.role,
      masterAddr: agentStore.host,
      masterPort: agentStore.port,
      storeToken: config.token,
      attempt: info.round,
      restartCount: info.restartCount,
      maxRestarts: config.maxRestarts,
      runId: config.runId,
      errorFile: logs.errorFile,
    });
    if (config.traceDir !== undefined) env.RINGTORCH_TRACE = config.traceDir;
    const redirected = streamsToFile(config.redirects, localRank);
    const teed = streamsToFile(config.tee, localRank);
    const shown = config.localRanksFilter === undefined || config.localRanksFilter.has(localRank);
    const { command, args } = workerCommand(config.entry, config.scriptArgs, config.nodeSnapshot);
    return {
      rank,
      localRank,
      command,
      args,
      env,
      cwd: process.cwd(),
      logs,
      toFile: { stdout: redirected.stdout || teed.stdout, stderr: redirected.stderr || teed.stderr },
      console: {
        stdout: shown && (!redirected.stdout || teed.stdout) ? process.stdout : undefined,
        stderr: shown && (!redirected.stderr || teed.stderr) ? process.stderr : undefined,
      },
      prefix: linePrefix(config.role, rank, localRank, process.env),
    };
  }

  private unlessStopped<T>(step: Promise<T>): Promise<T | "aborted"> {
    step.catch(() => {});
    return this.stopSignal !== undefined ? Promise.resolve("aborted") : Promise.race([step, this.aborted]);
  }
}

function nodeLost(info: RoundInfo, nodeRank: number, timeoutMs: number): FailureRecord {
  const node = info.nodes[nodeRank]!;
  return {
    host: node.host,
    nodeRank,
    rank: info.nodes.slice(0, nodeRank).reduce((sum, n) => sum + n.nproc, 0),
    localRank: 0,
    pid: node.pid,
    exitCode: null,
    signal: null,
    spawnError: undefined,
    timestamp: new Date().toISOString(),
    error: {
      type: "NodeLost",
      message: `the ringrun of node ${nodeRank} on ${node.host} (pid ${node.pid}) stopped answering for ${timeoutMs / 1000} s: its machine or its ringrun died`,
      stack: undefined,
    },
    errorFile: undefined,
    stdoutLog: undefined,
    stderrLog: undefined,
  };
}

/** torchrun copies the root cause to the launcher's own TORCHELASTIC_ERROR_FILE; so does ringrun. */
function writeJobErrorFile(root: FailureRecord): void {
  const path = process.env.RINGTORCH_ERROR_FILE ?? process.env.TORCHELASTIC_ERROR_FILE;
  if (path === undefined || path === "") return;
  try {
    writeFileSync(path, JSON.stringify(root, null, 2) + "\n", { mode: 0o600 });
  } catch {
    // The summary on stderr already says everything; a bad path must not hide it.
  }
}
