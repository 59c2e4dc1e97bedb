// Drives a progress bar for test/track/progress.test.ts: 30 items, 5 ms apart, a postfix on each,
// a message written halfway. Run under a pseudo-terminal (script -qfc) or with stderr piped.
import { track } from "../../../src/index.js";

const items = Array.from({ length: 30 }, (_, i) => i);
const bar = track.progress(items, { desc: "demo", lineInterval: Number(process.env.LINE_INTERVAL ?? 5) });
for (const i of bar) {
  const t = Date.now();
  while (Date.now() - t < 5);
  bar.setPostfix({ loss: 1 / (i + 1) });
  if (i === 15) bar.write("halfway there");
}
process.stderr.write("after\n");
