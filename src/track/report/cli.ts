import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { collect } from "./collect.js";
import { renderReport } from "./html.js";

const USAGE = `usage: ringtorch report <experiment dir> [--out <file.html>]

Writes one self-contained HTML file (no network requests) with every metric of every run under
the folder plotted per rank, the system metrics, the summary and the config side by side.
Default output: <experiment dir>/report.html. Works on runs still going.`;

/** `ringtorch <command> …`; returns the exit code. */
export function main(argv: string[]): number {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h") {
    console.log(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== "report") {
    console.error(`ringtorch: unknown command "${command}"; the one command is "report"\n\n${USAGE}`);
    return 2;
  }
  let dir: string | undefined;
  let out: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "--out" || rest[i] === "-o") {
      out = rest[++i];
      if (out === undefined) {
        console.error("ringtorch report: --out needs a file name");
        return 2;
      }
    } else if (rest[i] === "--help" || rest[i] === "-h") {
      console.log(USAGE);
      return 0;
    } else if (rest[i].startsWith("-") || dir !== undefined) {
      console.error(`ringtorch report: unexpected argument "${rest[i]}"\n\n${USAGE}`);
      return 2;
    } else dir = rest[i];
  }
  if (dir === undefined) {
    console.error(`ringtorch report: which experiment folder?\n\n${USAGE}`);
    return 2;
  }
  const root = resolve(dir);
  try {
    const runs = collect(root);
    const file = resolve(out ?? join(root, "report.html"));
    writeFileSync(file, renderReport(root, runs));
    console.log(`ringtorch report: ${runs.length} run${runs.length === 1 ? "" : "s"} → ${file}`);
    return 0;
  } catch (err) {
    console.error((err as Error).message);
    return 1;
  }
}
