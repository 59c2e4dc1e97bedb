/**
 * Time the calling (training) thread has spent blocked on communication: inside a synchronous
 * collective run on this thread, or waiting for the comm worker to finish one. Overlapped work
 * the thread never waits for is not counted: this is the communication a step actually pays.
 * The tracking layer's system metrics turn it into a share of step time.
 */
export const commStats = { waitMs: 0 };
