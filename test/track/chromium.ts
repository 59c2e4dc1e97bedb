// Loads a page in headless Chromium (Debian's `chromium`) through the DevTools protocol over
// --remote-debugging-pipe, and reports what a person would see go wrong: network requests,
// console errors, uncaught exceptions. Background networking is off, so any request is the page's.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";

export function chromiumPath(): string | null {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    const r = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return null;
}

export interface PageResult {
  requests: string[];
  consoleErrors: string[];
  /** The value of `expression`, evaluated once the page has loaded. */
  value: unknown;
  screenshot?: Buffer;
}

export async function loadPage(url: string, expression: string, options: { screenshot?: boolean; timeoutMs?: number; width?: number } = {}): Promise<PageResult> {
  const exe = chromiumPath();
  if (!exe) throw new Error("chromium is not installed (apt-get install -y chromium)");
  const profile = mkdtempSync(join(tmpdir(), "track-chromium-"));
  const args = [
    "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", `--user-data-dir=${profile}`,
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
    "--no-first-run", "--disable-extensions", "--metrics-recording-only", "--no-default-browser-check", "about:blank",
  ];
  // Its own process group, so that the renderer and helper processes go with it.
  const child = spawn(exe, args, { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], detached: true });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  let nextId = 1;
  const waiting = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  const listeners: ((method: string, params: Record<string, unknown>) => void)[] = [];
  let buffered = "";
  fromBrowser.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let end;
    while ((end = buffered.indexOf("\0")) >= 0) {
      const msg = JSON.parse(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
      if (msg.id !== undefined) {
        const w = waiting.get(msg.id);
        waiting.delete(msg.id);
        if (msg.error) w?.reject(new Error(`${JSON.stringify(msg.error)}`));
        else w?.resolve(msg.result);
      } else for (const l of listeners) l(msg.method, msg.params);
    }
  });
  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + "\0");
    });
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`chromium did not finish loading ${url} within ${timeoutMs} ms\n${stderr.slice(-2000)}`)), timeoutMs);
  });
  const exited = new Promise<never>((_, reject) => child.on("exit", (code) => reject(new Error(`chromium exited (${code}) early\n${stderr.slice(-2000)}`))));
  const work = (async () => {
    const requests: string[] = [];
    const consoleErrors: string[] = [];
    let loaded: () => void;
    const load = new Promise<void>((resolve) => (loaded = resolve));
    listeners.push((method, params) => {
      if (method === "Network.requestWillBeSent") requests.push((params.request as { url: string }).url);
      else if (method === "Runtime.consoleAPICalled" && (params.type === "error" || params.type === "assert")) consoleErrors.push(JSON.stringify(params.args));
      else if (method === "Runtime.exceptionThrown") consoleErrors.push(JSON.stringify(params.exceptionDetails));
      else if (method === "Log.entryAdded" && (params.entry as { level: string }).level === "error") consoleErrors.push(JSON.stringify(params.entry));
      else if (method === "Page.loadEventFired") loaded();
    });
    const { targetInfos } = (await send("Target.getTargets")) as { targetInfos: { targetId: string; type: string }[] };
    const page = targetInfos.find((t) => t.type === "page");
    if (!page) throw new Error("chromium opened no page");
    const { sessionId } = (await send("Target.attachToTarget", { targetId: page.targetId, flatten: true })) as { sessionId: string };
    for (const domain of ["Network", "Runtime", "Log", "Page"]) await send(`${domain}.enable`, {}, sessionId);
    await send("Emulation.setDeviceMetricsOverride", { width: options.width ?? 1200, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
    await send("Page.navigate", { url }, sessionId);
    await load;
    const evaluated = (await send("Runtime.evaluate", { expression, returnByValue: true }, sessionId)) as { result: { value: unknown } };
    let screenshot: Buffer | undefined;
    if (options.screenshot) {
      const shot = (await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true }, sessionId)) as { data: string };
      screenshot = Buffer.from(shot.data, "base64");
    }
    return { requests, consoleErrors, value: evaluated.result.value, screenshot };
  })();
  try {
    return await Promise.race([work, deadline, exited]);
  } finally {
    clearTimeout(timer);
    const exitedNow = new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
    await exitedNow;
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }
}
