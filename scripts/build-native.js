#!/usr/bin/env node
// Builds the native addon with node-gyp at install time. The build must work offline, so it
// points node-gyp at the headers Node ships (/usr/include/node) instead of downloading them.
// A failed build does not fail the install: ringtorch then runs on its `reference` backend and
// says so at load time. Set RINGTORCH_REQUIRE_NATIVE=1 (CI does) to make a failed build fatal.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

function nodeGypCommand() {
  if (process.env.npm_config_node_gyp) return [process.execPath, process.env.npm_config_node_gyp];
  try {
    return [process.execPath, require.resolve("node-gyp/bin/node-gyp.js")];
  } catch {
    const bundled = join(dirname(process.execPath), "../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js");
    if (existsSync(bundled)) return [process.execPath, bundled];
    return ["node-gyp"];
  }
}

function nodedirArgs() {
  if (process.env.npm_config_nodedir) return [`--nodedir=${process.env.npm_config_nodedir}`];
  const prefix = join(dirname(process.execPath), "..");
  if (existsSync(join(prefix, "include/node/node_api.h"))) return [`--nodedir=${prefix}`];
  return [];
}

const incremental = process.argv.includes("--incremental") && existsSync("build/Makefile");
const [cmd, ...baseArgs] = nodeGypCommand();
const args = [...baseArgs, incremental ? "build" : "rebuild", ...nodedirArgs(), `--jobs=${process.env.JOBS ?? "2"}`];
// Several developers' tools may build at once in one checkout: serialise on a lock file.
const useFlock = spawnSync("sh", ["-c", "command -v flock"], { stdio: "ignore" }).status === 0;
const result = useFlock
  ? spawnSync("flock", ["/tmp/ringtorch-native-build.lock", cmd, ...args], { stdio: "inherit" })
  : spawnSync(cmd, args, { stdio: "inherit" });

if (result.status !== 0) {
  const msg = "ringtorch: the native addon failed to build; ringtorch will run on the slow `reference` backend.";
  if (process.env.RINGTORCH_REQUIRE_NATIVE === "1") {
    console.error(msg + " RINGTORCH_REQUIRE_NATIVE=1 makes this fatal.");
    process.exit(result.status ?? 1);
  }
  console.warn(msg);
}
// The optional MPI addon, after node-gyp (a rebuild empties build/).
const mpi = spawnSync(process.execPath, [join(dirname(new URL(import.meta.url).pathname), "build-mpi.js")], { stdio: "inherit" });
if (mpi.status !== 0 && process.env.RINGTORCH_REQUIRE_NATIVE === "1") process.exit(mpi.status ?? 1);
