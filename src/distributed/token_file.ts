import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Where rank 0 leaves the job token for its same-machine peers when nobody provided one and the
 * store listens on a loopback address: a file only this user can read, in a directory only this
 * user can enter. Anyone able to read it could already read the processes' memory, so it grants
 * nothing new. Jobs across machines must share RINGTORCH_STORE_TOKEN (ringrun does this).
 */
export function tokenFilePath(host: string, port: number): string {
  const uid = process.getuid?.() ?? 0;
  const dir = process.env.XDG_RUNTIME_DIR ? join(process.env.XDG_RUNTIME_DIR, "ringtorch") : join(tmpdir(), `ringtorch-${uid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = statSync(dir);
  if (st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw new Error(
      `${dir} must belong to this user and be private (mode 700) to hold the job token; fix its permissions or set RINGTORCH_STORE_TOKEN`,
    );
  }
  return join(dir, `store-${host.replace(/[^0-9A-Za-z.-]/g, "_")}-${port}.token`);
}

/** Rank 0: a fresh token, written atomically so a peer never reads half of it. */
export function writeTokenFile(path: string): string {
  const token = randomBytes(24).toString("hex");
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, token, { mode: 0o600 });
  renameSync(tmp, path);
  return token;
}

export function readTokenFile(path: string): string | null {
  try {
    const token = readFileSync(path, "utf8").trim();
    return token.length > 0 ? token : null;
  } catch {
    return null;
  }
}

export function removeTokenFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** The variable naming a file that holds the job's token (a Slurm or Kubernetes job's secret, never in the environment itself). */
export const STORE_TOKEN_FILE_ENV = "RINGTORCH_STORE_TOKEN_FILE";

/**
 * The token in RINGTORCH_STORE_TOKEN_FILE, or undefined when it is not set. The file must belong
 * to this user and be unreadable by group and others: a token anyone on the machine can read
 * admits anyone to the store. A Kubernetes Secret mounted with defaultMode 0400 passes.
 */
export function readTokenFileEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = env[STORE_TOKEN_FILE_ENV];
  if (path === undefined || path === "") return undefined;
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    throw new Error(`${STORE_TOKEN_FILE_ENV}=${path}: cannot read the job token file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new Error(`${STORE_TOKEN_FILE_ENV}=${path} belongs to uid ${st.uid}, not to this user (uid ${uid}); the job token must be the job user's own file`);
  }
  if ((st.mode & 0o077) !== 0) {
    throw new Error(
      `${STORE_TOKEN_FILE_ENV}=${path} is readable by others (mode ${(st.mode & 0o777).toString(8).padStart(3, "0")}); the job token must be private: ` +
        `\`chmod 600 ${path}\`, or create it under \`umask 077\``,
    );
  }
  const token = readFileSync(path, "utf8").trim();
  if (token.length === 0) throw new Error(`${STORE_TOKEN_FILE_ENV}=${path} is empty; write the job's secret into it (e.g. \`openssl rand -hex 32 > ${path}\`)`);
  return token;
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}
