// A worker thread that listens like a rank's TCP transport and accepts one connection with the
// handshake, for init.test.ts. Posts {port}, then {from} or {refused}.
import { parentPort, workerData } from "node:worker_threads";
import { acceptHandshake } from "../../../src/distributed/engine/handshake.js";
import { loadCommNative } from "../../../src/distributed/native.js";

const native = loadCommNative();
const [fd, port] = native.tcpListen("127.0.0.1", 0);
parentPort!.postMessage({ port });
let conn = -1;
for (let i = 0; i < 100 && conn < 0; i++) {
  const r = native.tcpAccept(fd, 100);
  if (typeof r === "number") conn = r;
}
try {
  const from = acceptHandshake(native, conn, (workerData as { token: string }).token, 0, new Set([1]), 5000);
  parentPort!.postMessage({ from });
} catch (err) {
  parentPort!.postMessage({ refused: (err as Error).message });
}
native.closeFd(conn);
native.closeFd(fd);
