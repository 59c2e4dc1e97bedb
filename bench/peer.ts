/**
 * The PyTorch every bench compares against: the strongest one this machine has, run at its best
 * settings, and described in the bench's own output so that a ratio always says what it is over.
 *
 * Order of choice: PEER_PYTHON if set; else ~/.venvs/peer/bin/python when it imports torch 2.x;
 * else Debian's /usr/bin/python3 with python3-torch (1.13 on OpenBLAS), with the one command that
 * would make the stronger venv printed beside it (benches never install anything themselves).
 *
 * The peer's command runs without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE: these machines set them
 * for old OpenBLAS builds, and they hold Debian's OpenBLAS to AVX2 kernels (about half its AVX-512
 * speed). Because OpenBLAS may misbehave on a CPU it then detects itself, the first description of
 * a peer checks one float32 product against float64 and prints the error. Threads are pinned for
 * the peer's command alone: OMP_NUM_THREADS/MKL_NUM_THREADS for PyTorch 2.x (its BLAS runs on its
 * OpenMP pool), OPENBLAS_NUM_THREADS for Debian's build, the other pool at 1 so that two pools
 * never oversubscribe the cores.
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Peer {
  python: string;
  /** Why this one: "PEER_PYTHON", "venv ~/.venvs/peer", "Debian python3-torch". */
  source: string;
  version: string;
  major: number;
  /** BLAS/MKL/oneDNN as torch reports them. */
  blas: string;
  fusedAdam: boolean;
  sdpa: boolean;
  /** The float32-vs-float64 check of one product, run under the peer's environment. */
  check: string;
}

const VENV_PYTHON = join(homedir(), ".venvs/peer/bin/python");
const DEBIAN_PYTHON = "/usr/bin/python3";
export const VENV_COMMAND = "python3 -m venv ~/.venvs/peer && ~/.venvs/peer/bin/pip install torch==2.13.0";

const PROBE = `
import json, torch
cfg = torch.__config__.show()
blas = [w for w in ("MKL", "OpenBLAS", "BLIS") if ("BLAS_INFO=" + w.lower()) in cfg.replace(" ", "").lower() or ("USE_" + w.upper() + "=ON") in cfg]
if torch.backends.mkl.is_available() and "MKL" not in blas: blas.append("MKL")
if torch.backends.mkldnn.is_available(): blas.append("oneDNN")
import inspect
fused = "fused" in inspect.signature(torch.optim.Adam.__init__).parameters
sdpa = hasattr(torch.nn.functional, "scaled_dot_product_attention")
g = torch.Generator().manual_seed(0)
a = torch.randn(512, 512, generator=g); b = torch.randn(512, 512, generator=g)
ref = a.double() @ b.double()
err = ((a @ b).double() - ref).abs().max().item() / ref.abs().max().item()
print(json.dumps({"version": torch.__version__, "blas": "+".join(blas) or "unknown", "fused": fused, "sdpa": sdpa, "err": err}))
`;

/** The environment of the peer's command: process.env without the OpenBLAS CPU overrides, threads pinned. */
export function peerEnv(peer: Pick<Peer, "major">, threads: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  const n = String(threads);
  if (peer.major >= 2) Object.assign(env, { OMP_NUM_THREADS: n, MKL_NUM_THREADS: n, OPENBLAS_NUM_THREADS: "1" });
  else Object.assign(env, { OPENBLAS_NUM_THREADS: n, OMP_NUM_THREADS: "1", MKL_NUM_THREADS: "1" });
  return Object.assign(env, { NT: n }, extra);
}

function probe(python: string, source: string): Peer | string {
  if (!existsSync(python)) return `${python} not found`;
  const r = spawnSync(python, ["-c", PROBE], { encoding: "utf8", env: peerEnv({ major: 2 }, 1), timeout: 120_000 });
  if (r.status !== 0) return `${python} cannot import torch (${(r.stderr || r.error?.message || "").trim().split("\n").pop()})`;
  const p = JSON.parse(r.stdout.trim().split("\n").pop()!) as { version: string; blas: string; fused: boolean; sdpa: boolean; err: number };
  const major = Number(p.version.split(".")[0]);
  const ok = p.err < 1e-5;
  return {
    python, source, version: p.version, major, blas: p.blas, fusedAdam: p.fused, sdpa: p.sdpa,
    check: `512² float32 product vs float64: max error ${p.err.toExponential(1)} of the largest entry (${ok ? "ok" : "SUSPECT: the peer's BLAS may be broken on this CPU"})`,
  };
}

let found: Peer | string | undefined;

/** The strongest PyTorch here, or why there is none (cached for the process). */
export function findPeer(): Peer | string {
  if (found !== undefined) return found;
  const tried: string[] = [];
  const candidates: [string, string][] = [];
  if (process.env.PEER_PYTHON) candidates.push([process.env.PEER_PYTHON, "PEER_PYTHON"]);
  else candidates.push([VENV_PYTHON, "venv ~/.venvs/peer"], [DEBIAN_PYTHON, "Debian python3-torch"]);
  for (const [python, source] of candidates) {
    const p = probe(python, source);
    if (typeof p === "string") {
      tried.push(p);
      continue;
    }
    if (p.major < 2 && source === "venv ~/.venvs/peer") {
      tried.push(`${python} has torch ${p.version}, not 2.x`);
      continue;
    }
    return (found = p);
  }
  return (found = `no PyTorch found (${tried.join("; ")}); for the strongest peer: ${VENV_COMMAND}`);
}

/** Lines every bench prints before its table: which PyTorch, its BLAS, the settings, the check. */
export function describePeer(peer: Peer | string, threads: number): string {
  if (typeof peer === "string") return `PyTorch peer: missing: ${peer}`;
  const env = peerEnv(peer, threads);
  const lines = [
    `PyTorch peer: ${peer.version} (${peer.source}: ${peer.python}), BLAS ${peer.blas}; fused optimizers ${peer.fusedAdam ? "on" : "not in this version"}, scaled_dot_product_attention ${peer.sdpa ? "on" : "not in this version"}`,
    `  peer settings: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, OMP_NUM_THREADS=${env.OMP_NUM_THREADS} MKL_NUM_THREADS=${env.MKL_NUM_THREADS} OPENBLAS_NUM_THREADS=${env.OPENBLAS_NUM_THREADS}`,
    `  ${peer.check}`,
  ];
  if (peer.major < 2) lines.push(`  a stronger peer (PyTorch 2.x with MKL) may be one command away: ${VENV_COMMAND}`);
  return lines.join("\n");
}

/** Runs the peer with `argv` under its pinned environment. */
export function runPeer(peer: Peer, argv: string[], threads: number, extraEnv: Record<string, string> = {}, timeoutMs = 900_000): SpawnSyncReturns<string> {
  return spawnSync(peer.python, argv, { encoding: "utf8", env: peerEnv(peer, threads, extraEnv), timeout: timeoutMs, maxBuffer: 64 << 20 });
}

/** Throws with the peer's last line of stderr when it failed. */
export function peerOutput(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`the PyTorch peer failed (${what}): ${(r.stderr || r.error?.message || "").trim().split("\n").slice(-3).join(" / ")}`);
  return r.stdout;
}

/** A peer script of bench/torch/. */
export function peerScript(name: string): string {
  return fileURLToPath(new URL(`./torch/${name}`, import.meta.url));
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  console.log(describePeer(findPeer(), 1));
}
