import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { bytesToString, StoreTimeoutError, type Store } from "../distributed/store/store.js";
import type { FailureRecord } from "./failure.js";
import type { RendezvousTimeouts } from "./launch_config.js";

/**
 * How the ringrun agents of a job agree on who takes part in each attempt ("round") and on how
 * each round ends. Every key lives in the job's store under /ringrun/:
 *
 *   round                 the current round; agents join it, late ones wait for the next
 *   finished              "succeeded" | "failed" | "aborted" once the job is over
 *   r<R>/node/<slot>      a participant's NodeInfo (slot = node rank)
 *   r<R>/joined           participants so far (a counter)
 *   r<R>/complete         static: set when every node rank has joined
 *   r<R>/closed           c10d: the final participant count, written once (compare-and-set)
 *   r<R>/restarts         restarts that happened before round R
 *   r<R>/expected         c10d: nodes the previous round had plus those waiting; the round
 *                         closes as soon as they are all back
 *   r<R>/end              how the round ended (RoundEnd), first writer wins: every agent acts on
 *                         the same outcome, so a node that saw no failure of its own still
 *                         restarts (or stops) with the others
 *   r<R>/done             nodes whose workers all exited 0; the last one writes end=succeeded
 *   r<R>/hb/<slot>        a counter each agent bumps every second; one that stops moving for
 *                         heartbeat_timeout means that node's ringrun or machine is gone
 *   r<R>/waiting          c10d: nodes that arrived after the round closed
 *   r<R>/left             agents that saw the final outcome, so the host may close the store
 *
 * static: a fixed number of nodes, each with its --node-rank; a round starts when all have joined.
 * c10d: MIN:MAX nodes numbered in order of arrival; a round closes when MAX have joined, or
 * last_call_timeout after MIN had. A node arriving later waits; while the round has room and its
 * workers run, the running agents end the round ("membership") and everyone rejoins the next
 * one, without using up a restart.
 */
export interface NodeInfo {
  readonly host: string;
  readonly nproc: number;
  readonly pid: number;
  readonly agent: string;
}

export interface RoundInfo {
  readonly round: number;
  readonly restartCount: number;
  readonly nodeRank: number;
  readonly nodes: readonly NodeInfo[];
  readonly worldSize: number;
  /** Global rank of this node's local rank 0. */
  readonly rankOffset: number;
}

export type RoundEnd =
  | { readonly reason: "succeeded" }
  | { readonly reason: "failed"; readonly failure: FailureRecord }
  | { readonly reason: "membership" }
  | { readonly reason: "aborted"; readonly message: string };

export type JobOutcome = "succeeded" | "failed" | "aborted";

export class RendezvousError extends Error {
  override readonly name = "RendezvousError";
}

export interface RendezvousOptions {
  readonly backend: "static" | "c10d";
  readonly minNodes: number;
  readonly maxNodes: number;
  readonly nodeRank: number;
  readonly timeouts: RendezvousTimeouts;
  readonly host: string;
  readonly nproc: number;
  /** host:port of the store, for messages. */
  readonly endpoint: string;
}

const PREFIX = "/ringrun/";
const POLL_MS = 100;

export class Rendezvous {
  private readonly self: NodeInfo;
  private readonly mine: string;
  private current: RoundInfo | undefined;
  private readonly heartbeats = new Map<number, { value: number; changedAt: number }>();

  constructor(
    private readonly store: Store,
    private readonly opts: RendezvousOptions,
  ) {
    this.self = { host: opts.host, nproc: opts.nproc, pid: process.pid, agent: randomBytes(8).toString("hex") };
    this.mine = JSON.stringify(this.self);
  }

  get round(): RoundInfo {
    if (this.current === undefined) throw new Error("Rendezvous.round read before a round was joined");
    return this.current;
  }

  /** Joins the job's current round (first call) or `round`; "finished" when the job ended before this node got a place. */
  async join(round?: number): Promise<RoundInfo | { finished: JobOutcome }> {
    if (await this.store.check([`${PREFIX}finished`])) return { finished: (await this.str(`${PREFIX}finished`)) as JobOutcome };
    const r = round ?? (await this.store.add(`${PREFIX}round`, 0));
    const placed = this.opts.backend === "static" ? await this.joinStatic(r) : await this.joinElastic(r);
    if (placed === "late") return this.waitForNextRound(r);
    const [slot, count] = placed;
    const nodes: NodeInfo[] = [];
    for (let i = 0; i < count; i++) nodes.push(JSON.parse(await this.str(this.key(r, `node/${i}`), this.opts.timeouts.joinTimeoutMs)) as NodeInfo);
    const restartCount = (await this.store.check([this.key(r, "restarts")])) ? Number(await this.str(this.key(r, "restarts"))) : 0;
    this.heartbeats.clear();
    this.current = {
      round: r,
      restartCount,
      nodeRank: slot,
      nodes,
      worldSize: nodes.reduce((sum, n) => sum + n.nproc, 0),
      rankOffset: nodes.slice(0, slot).reduce((sum, n) => sum + n.nproc, 0),
    };
    return this.current;
  }

  /** Records how the current round ended unless another agent already did; returns the outcome that stands. */
  async endRound(end: RoundEnd): Promise<RoundEnd> {
    return JSON.parse(bytesToString(await this.store.compareSet(this.key(this.round.round, "end"), "", JSON.stringify(end)))) as RoundEnd;
  }

  async roundEnd(): Promise<RoundEnd | undefined> {
    const key = this.key(this.round.round, "end");
    return (await this.store.check([key])) ? (JSON.parse(await this.str(key)) as RoundEnd) : undefined;
  }

  /** This node's workers all succeeded; the last node to say so ends the round. */
  async markDone(): Promise<void> {
    const done = await this.store.add(this.key(this.round.round, "done"), 1);
    if (done >= this.round.nodes.length) await this.endRound({ reason: "succeeded" });
  }

  /** Bumps this node's heartbeat and returns the nodes whose heartbeat has not moved for heartbeat_timeout. */
  async heartbeat(): Promise<number[]> {
    const { round, nodeRank, nodes } = this.round;
    await this.store.add(this.key(round, `hb/${nodeRank}`), 1);
    const now = Date.now();
    const silent: number[] = [];
    for (let i = 0; i < nodes.length; i++) {
      if (i === nodeRank) continue;
      const value = await this.store.add(this.key(round, `hb/${i}`), 0);
      const seen = this.heartbeats.get(i);
      if (seen === undefined || seen.value !== value) this.heartbeats.set(i, { value, changedAt: now });
      else if (now - seen.changedAt > this.opts.timeouts.heartbeatTimeoutMs) silent.push(i);
    }
    return silent;
  }

  /** c10d: whether nodes are waiting for a place that the current round could still give them. */
  async nodesWaiting(): Promise<boolean> {
    if (this.opts.backend !== "c10d" || this.round.nodes.length >= this.opts.maxNodes) return false;
    return (await this.store.add(this.key(this.round.round, "waiting"), 0)) > 0;
  }

  /**
   * Opens the next round; idempotent, so every agent that decided to go on may call it. The next
   * round expects this round's nodes plus those waiting, so that a c10d round does not close
   * before they arrive just because the last call ran out.
   */
  async advance(restartCount: number): Promise<number> {
    const { round, nodes } = this.round;
    const next = round + 1;
    const waiting = this.opts.backend === "c10d" ? await this.store.add(this.key(round, "waiting"), 0) : 0;
    await this.store.compareSet(this.key(next, "expected"), "", String(Math.min(this.opts.maxNodes, nodes.length + waiting)));
    await this.store.compareSet(this.key(next, "restarts"), "", String(restartCount));
    await this.store.compareSet(`${PREFIX}round`, String(round), String(next));
    return next;
  }

  async finish(outcome: JobOutcome): Promise<void> {
    await this.store.compareSet(`${PREFIX}finished`, "", outcome);
    await this.store.add(this.key(this.round.round, "left"), 1);
  }

  /** The host keeps the store up until every agent has seen the outcome (or stopped answering). */
  async waitForOthersToLeave(): Promise<void> {
    const deadline = Date.now() + this.opts.timeouts.heartbeatTimeoutMs;
    const key = this.key(this.round.round, "left");
    while (Date.now() < deadline && (await this.store.add(key, 0)) < this.round.nodes.length) await sleep(POLL_MS);
  }

  private async joinStatic(r: number): Promise<[number, number]> {
    const { nodeRank, maxNodes: n } = this.opts;
    const held = bytesToString(await this.store.compareSet(this.key(r, `node/${nodeRank}`), "", this.mine));
    if (held !== this.mine) {
      const other = JSON.parse(held) as NodeInfo;
      throw new RendezvousError(
        `node rank ${nodeRank} is already taken in attempt ${r} by the ringrun on ${other.host} (pid ${other.pid}); give every node its own --node-rank from 0 to ${n - 1}`,
      );
    }
    if ((await this.store.add(this.key(r, "joined"), 1)) === n) await this.store.set(this.key(r, "complete"), "1");
    try {
      await this.store.wait([this.key(r, "complete")], this.opts.timeouts.joinTimeoutMs);
    } catch (error) {
      if (!(error instanceof StoreTimeoutError)) throw error;
      const missing: number[] = [];
      for (let i = 0; i < n; i++) if (!(await this.store.check([this.key(r, `node/${i}`)]))) missing.push(i);
      throw new RendezvousError(
        `rendezvous at ${this.opts.endpoint} timed out after ${this.opts.timeouts.joinTimeoutMs / 1000} s: node rank(s) ${missing.join(", ")} of ${n} never joined; start ringrun on every node with the same --nnodes, --master-addr and --master-port`,
      );
    }
    return [nodeRank, n];
  }

  private async joinElastic(r: number): Promise<[number, number] | "late"> {
    const { minNodes, maxNodes, timeouts } = this.opts;
    const slot = (await this.store.add(this.key(r, "joined"), 1)) - 1;
    if (slot >= maxNodes) return "late";
    await this.store.set(this.key(r, `node/${slot}`), this.mine);
    const closedKey = this.key(r, "closed");
    if (slot + 1 === maxNodes) await this.store.compareSet(closedKey, "", String(maxNodes));
    // A restart round knows who should come back; those get until heartbeat_timeout before the
    // round goes on without them.
    const expected = (await this.store.check([this.key(r, "expected")])) ? Number(await this.str(this.key(r, "expected"))) : minNodes;
    const lastCallMs = expected > minNodes ? Math.max(timeouts.lastCallTimeoutMs, timeouts.heartbeatTimeoutMs) : timeouts.lastCallTimeoutMs;
    const start = Date.now();
    let enoughSince: number | undefined;
    while (!(await this.store.check([closedKey]))) {
      const joined = await this.store.add(this.key(r, "joined"), 0);
      if (joined >= minNodes) {
        enoughSince ??= Date.now();
        if (joined >= maxNodes || (expected > minNodes && joined >= expected) || Date.now() - enoughSince >= lastCallMs) {
          await this.store.compareSet(closedKey, "", String(Math.min(joined, maxNodes)));
          continue;
        }
      } else if (Date.now() - start > timeouts.joinTimeoutMs) {
        throw new RendezvousError(
          `rendezvous at ${this.opts.endpoint} timed out after ${timeouts.joinTimeoutMs / 1000} s: ${joined} node(s) joined, at least ${minNodes} needed (--nnodes ${minNodes}:${maxNodes})`,
        );
      }
      await sleep(POLL_MS);
    }
    const count = Number(await this.str(closedKey));
    return slot < count ? [slot, count] : "late";
  }

  private async waitForNextRound(r: number): Promise<RoundInfo | { finished: JobOutcome }> {
    await this.store.add(this.key(r, "waiting"), 1);
    const deadline = Date.now() + this.opts.timeouts.joinTimeoutMs;
    while (Date.now() < deadline) {
      if (await this.store.check([`${PREFIX}finished`])) return { finished: (await this.str(`${PREFIX}finished`)) as JobOutcome };
      const current = await this.store.add(`${PREFIX}round`, 0);
      if (current > r) return this.join(current);
      await sleep(POLL_MS);
    }
    throw new RendezvousError(
      `no place in the job at ${this.opts.endpoint}: it runs with ${this.opts.maxNodes} node(s) at most and no new round began within join_timeout (${this.opts.timeouts.joinTimeoutMs / 1000} s)`,
    );
  }

  private key(round: number, name: string): string {
    return `${PREFIX}r${round}/${name}`;
  }

  private async str(key: string, timeoutMs?: number): Promise<string> {
    return bytesToString(await this.store.get(key, timeoutMs));
  }
}
