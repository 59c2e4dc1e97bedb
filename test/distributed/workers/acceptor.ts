// A worker thread that listens like a rank's TCP transport and accepts one connection with the
// handshake, for init.test.ts. Posts {port}, then {from} or {refused}.
import { parentPort, workerData } from "node:worker_threads";
import { connectionKey, PendingHandshakes } from "../../../src/distributed/engine/handshake.js";
import { loadCommNative } from "../../../src/distributed/native.js";

const native = loadCommNative();
const [fd, port] = native.tcpListen("127.0.0.1", 0);
parentPort!.postMessage({ port });
let conn = -1;
for (let i = 0; i < 100 && conn < 0; i++) {
  const r = native.tcpAccept(fd, 100, 0);
  if (typeof r === "number") conn = r;
}
let done = false;
const handshakes = new PendingHandshakes(native, (workerData as { token: string }).token, 0, new Set([connectionKey(1, 0)]), (reason) => {
  done = true;
  parentPort!.postMessage({ refused: reason });
});
handshakes.add(conn);
for (let i = 0; i < 50 && !done; i++) {
  const ready = new Uint8Array(1);
  native.sockPoll(Int32Array.of(conn), ready, 100);
  if (ready[0]) {
    const proven = handshakes.progress(conn);
    if (proven !== undefined) {
      done = true;
      parentPort!.postMessage({ from: proven.from });
      native.closeFd(conn);
    }
  }
  handshakes.expire();
}
handshakes.closeAll();
native.closeFd(fd);
