import { getBackend } from "./index.js";
import { parseThreadCount } from "./cpu/threads.js";

interface Threaded {
  setNumThreads(n: number): void;
  getNumThreads(): number;
}

const threaded = (b: object): b is Threaded => typeof (b as Partial<Threaded>).setNumThreads === "function";

/**
 * Sets the threads of the native kernels' pool (torch.set_num_threads). The default is every core,
 * or 1 per process when a launcher runs several on this host; RINGTORCH_NUM_THREADS overrides it.
 * On the reference backend (single-threaded) the count is checked and has no effect.
 */
export function setNumThreads(n: number): void {
  const b = getBackend();
  if (threaded(b)) b.setNumThreads(n);
  else parseThreadCount(n, "setNumThreads");
}

/** The threads the kernels use (torch.get_num_threads); 1 on the reference backend. */
export function getNumThreads(): number {
  const b = getBackend();
  return threaded(b) ? b.getNumThreads() : 1;
}
