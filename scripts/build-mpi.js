#!/usr/bin/env node
// Builds the optional MPI addon (build/Release/ringtorch_mpi.node, native/mpi/) for
// initProcessGroup({ backend: "mpi" }), only where an MPI C++ compiler wrapper is installed
// (Debian: libopenmpi-dev). Without one it says so and succeeds: the default build needs no MPI.
// Run by scripts/build-native.js; alone: node scripts/build-mpi.js
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const compiler = ["mpicxx", "mpic++"].find((c) => spawnSync("sh", ["-c", `command -v ${c}`], { stdio: "ignore" }).status === 0);
if (!compiler) {
  console.log("ringtorch: no MPI compiler (mpicxx) found; the optional `mpi` backend is not built (Debian: apt-get install libopenmpi-dev)");
  process.exit(0);
}
const nodeInclude = [process.env.npm_config_nodedir, join(dirname(process.execPath), "..")]
  .filter(Boolean)
  .map((d) => join(d, "include", "node"))
  .find((d) => existsSync(join(d, "node_api.h")));
if (!nodeInclude) {
  console.warn("ringtorch: Node's headers (include/node/node_api.h) were not found; the `mpi` backend is not built");
  process.exit(0);
}
const addonApi = dirname(createRequire(import.meta.url).resolve("node-addon-api/package.json"));
mkdirSync(join(root, "build", "Release"), { recursive: true });
const out = join(root, "build", "Release", "ringtorch_mpi.node");
const args = ["-O2", "-shared", "-fPIC", "-std=c++17", "-DNAPI_VERSION=8", "-DNAPI_DISABLE_CPP_EXCEPTIONS", `-I${nodeInclude}`, `-I${addonApi}`, join(root, "native/mpi/mpi_addon.cc"), join(root, "native/mpi/mpi_thread.cc"), "-o", out, "-ldl", "-pthread"];
const r = spawnSync(compiler, args, { stdio: "inherit" });
if (r.status !== 0) {
  console.warn("ringtorch: the MPI addon failed to build; initProcessGroup({ backend: \"mpi\" }) will say so");
  if (process.env.RINGTORCH_REQUIRE_NATIVE === "1") process.exit(r.status ?? 1);
}
