import { DTYPES, arrayTypeOf, itemSize, type DType } from "../../tensor/dtype.js";
import { Storage } from "../../tensor/storage.js";
import { Tensor } from "../../tensor/tensor.js";

/**
 * The per-step protocol between the main thread and one replica's worker thread: a small block of
 * shared Int32 words, waited on with Atomics.wait/notify, and buffers that both threads keep for
 * the replica's lifetime. A step passes no message: the main thread copies the replica's piece of
 * the batch into `input` (and its piece of the target into `target`, for forwardLoss), the worker
 * writes its output (or its piece's loss) into `output`, the main thread writes the output's
 * gradient into `outGrad`, and the worker copies each parameter's gradient into its own buffer
 * the moment its backward has accumulated it, marking it in `ready` (one Int32 word per parameter,
 * set to the pass's PASS), so that the main thread adds it into `.grad` while the worker's backward
 * goes on: a parameter whose word is not this pass's had no gradient in it. Messages (MessagePort) carry only what cannot live in
 * shared words: a replaced buffer, a rebuilt module, an error.
 *
 * Why not a message per step: structured clones of tensor descriptions cost more than a small
 * model's whole step (each received shape array also has another hidden class than the ones the
 * compiled code had seen, so V8 kept deoptimizing and recompiling on its background threads).
 */
export const CMD = 0; // bumped by the main thread for each request
export const DONE = 1; // set to CMD's value by the worker when the request is answered
export const OP = 2;
export const FLAGS = 3; // F_GRAD | F_TRAINING for a forward
export const STATUS = 4; // what the worker left on the port with its answer (S_*)
export const IN_DTYPE = 5;
export const IN_NDIM = 6;
export const OUT_DTYPE = 7;
export const OUT_NDIM = 8;
export const PASS = 9; // with a backward request: its number, which the worker writes into `ready` per parameter (see below)
export const TGT_DTYPE = 10; // the target's, for a forward with the criterion (F_LOSS)
export const TGT_NDIM = 11;
/**
 * With a forward that carries F_BACKWARD (forwardLoss with grad): the worker runs its piece's backward
 * right after answering the forward, with a gradient of 1 for its scalar loss, and then sets
 * BACKWARD_DONE to that pass's PASS (whether or not there was a graph to run), with BACKWARD_STATUS
 * saying whether an error waits on the port.
 */
export const BACKWARD_DONE = 12;
export const BACKWARD_STATUS = 13;
/**
 * Set to 1 by a worker thread that is ending without having been closed (its exit handler). That
 * handler also answers the request or the backward it was running with S_EXITED, but leaves an
 * answer already given alone: the main thread reads it as given, and hears of the exit at its next
 * wait on this replica, which looks here before blocking.
 */
export const EXITED = 14;
export const MAX_DIMS = 16;
export const IN_SHAPE = 16;
export const OUT_SHAPE = IN_SHAPE + MAX_DIMS;
export const TGT_SHAPE = OUT_SHAPE + MAX_DIMS;
export const WORDS = TGT_SHAPE + MAX_DIMS;
/** Float64 words after the Int32 ones, in the same buffer: times in ms on one clock for all threads (wallMs). */
export const ANSWERED_MS = 0; // when the worker answered its last request
export const MAIN_BACKWARD_MS = 1; // when the main thread's own piece's backward ended (the profile's idleForMainBackward)
export const BACKWARD_MS = 2; // when the worker ended the backward it ran on its own (F_BACKWARD)
const TIMES = 3;

/** The control words' buffer: WORDS Int32 words, then TIMES Float64 words (timesOf). */
export function controlWords(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * WORDS + 8 * TIMES));
}

/** The Float64 words of a control block. */
export function timesOf(ctrl: Int32Array): Float64Array {
  return new Float64Array(ctrl.buffer, 4 * WORDS, TIMES);
}

/** Milliseconds on a clock that every thread of the process shares (performance.now() alone counts from each thread's start). */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

export const OP_START = 1;
export const OP_FORWARD = 2;
export const OP_BACKWARD = 3;
export const OP_MESSAGE = 4; // only the message on the port (a rebuilt module)
export const OP_CLOSE = 5;

export const F_GRAD = 1;
export const F_TRAINING = 2;
export const F_PORT = 4; // a message waits on the port with this request
export const F_LOSS = 8; // the forward ends with the criterion on the target's piece: the output is the loss
export const F_BACKWARD = 16; // with F_LOSS: the backward follows the forward's answer at once (BACKWARD_DONE)

export const S_OK = 0;
export const S_ERROR = 1; // { error } waits on the port
export const S_MESSAGE = 2; // new buffers wait on the port: { output, outGrad } or { grads, ready }
export const S_EXITED = 3; // the worker thread is ending without having been closed

/** A shape written into the control words at `at`. */
export function writeShape(ctrl: Int32Array, at: number, ndimAt: number, shape: readonly number[], what: string): void {
  if (shape.length > MAX_DIMS) throw new RangeError(`DataParallel: the ${what} has ${shape.length} dimensions; at most ${MAX_DIMS} are supported`);
  ctrl[ndimAt] = shape.length;
  for (let i = 0; i < shape.length; i++) ctrl[at + i] = shape[i]!;
}

/** A shape read from the control words, as an ordinary array (the same hidden class as any other shape). */
export function readShape(ctrl: Int32Array, at: number, ndimAt: number): number[] {
  const shape: number[] = [];
  const n = ctrl[ndimAt]!;
  for (let i = 0; i < n; i++) shape.push(ctrl[at + i]!);
  return shape;
}

export const dtypeCode = (dtype: DType): number => DTYPES.indexOf(dtype);
export const dtypeOf = (code: number): DType => DTYPES[code]!;

/** Bytes for `numel` elements of `dtype`, rounded up to whole 8-byte words (any typed array fits). */
export function bytesFor(dtype: DType, numel: number): number {
  return Math.ceil((numel * itemSize(dtype)) / 8) * 8;
}

/** A buffer of at least `bytes`, growing by half again so that slowly growing shapes do not reallocate each step. */
export function grown(buffer: SharedArrayBuffer | null, bytes: number): SharedArrayBuffer | null {
  if (buffer && buffer.byteLength >= bytes) return null;
  return new SharedArrayBuffer(Math.max(64, bytes, Math.ceil((buffer?.byteLength ?? 0) * 1.5)));
}

/** A contiguous tensor of `shape` over the start of `buffer` (memory the protocol owns: never released to a pool). */
export function tensorOver(buffer: SharedArrayBuffer, dtype: DType, shape: readonly number[]): Tensor {
  const Ctor = arrayTypeOf(dtype);
  let numel = 1;
  for (const d of shape) numel *= d;
  const storage = new Storage(dtype, new Ctor(buffer, 0, numel));
  storage.expose();
  return new Tensor(storage, shape);
}

const napWord = new Int32Array(new SharedArrayBuffer(4));
/** Sleeps this thread (Atomics.wait on a word nobody changes). */
export function nap(ms: number): void {
  Atomics.wait(napWord, 0, 0, ms);
}
