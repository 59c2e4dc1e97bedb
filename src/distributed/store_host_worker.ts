import { parentPort, workerData } from "node:worker_threads";
import { TCPStoreServer } from "./store/tcp_store.js";

const opts = workerData as { host: string; port: number; token: string };

TCPStoreServer.listen({ host: opts.host, port: opts.port, token: opts.token }).then(
  (server) => {
    parentPort!.postMessage({ port: server.port });
    parentPort!.on("message", (m) => {
      if (m === "close") void server.close().then(() => process.exit(0));
    });
  },
  (err: Error) => parentPort!.postMessage({ error: err.message }),
);
