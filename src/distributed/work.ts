/**
 * A collective or point-to-point operation in flight (torch.distributed's Work). `wait()` blocks
 * the calling thread until the operation is done and throws its error; `promise` settles at the
 * same time without blocking. The operation progresses on the communication worker whether or not
 * anyone waits.
 */
export class Work {
  private state: "pending" | "done" | "failed" = "pending";
  private error: Error | null = null;
  private settledPromise: Promise<void> | null = null;
  private resolvers: { resolve: () => void; reject: (e: Error) => void } | null = null;

  constructor(
    /** What the operation is, for messages: "allReduce #3". */
    readonly description: string,
    private readonly blockUntilSettled: (work: Work) => void,
    private readonly onSettle: (() => void) | null = null,
    /** Takes in the reports that have come without blocking (the worker's "done" messages), for test(). */
    private readonly poll: (() => void) | null = null,
  ) {}

  /** A Work for an operation that finished as it was called (one-process groups). */
  static completed(description: string): Work {
    const w = new Work(description, () => {});
    w.settle(null);
    return w;
  }

  /** Blocks until the operation is done; throws if it failed. Returns true, like torch. */
  wait(): true {
    if (this.state === "pending") this.blockUntilSettled(this);
    if (this.state === "pending") throw new Error(`internal: ${this.description} is still pending after wait()`);
    // A fresh error, so that its stack shows where the caller waited rather than the worker's report.
    if (this.error) throw new DistributedError(this.error.message);
    return true;
  }

  /** Settles when the operation does; rejects with its error. */
  get promise(): Promise<void> {
    if (!this.settledPromise) {
      if (this.state === "done") this.settledPromise = Promise.resolve();
      else if (this.state === "failed") this.settledPromise = Promise.reject(this.error!);
      else this.settledPromise = new Promise<void>((resolve, reject) => (this.resolvers = { resolve, reject }));
    }
    return this.settledPromise;
  }

  /**
   * Whether the operation is done, having first taken in what the worker has reported: a wait of
   * zero. isCompleted() only reads the state, which changes when this thread waits or returns to
   * its event loop; a thread that computes for long stretches (a pipeline stage) calls test()
   * between them to learn what arrived meanwhile.
   */
  test(): boolean {
    if (this.state === "pending") this.poll?.();
    return this.isCompleted();
  }

  isCompleted(): boolean {
    return this.state !== "pending";
  }

  isSuccess(): boolean {
    return this.state === "done";
  }

  exception(): Error | null {
    return this.error;
  }

  /** Called by the process group when the worker reports the outcome. */
  settle(error: string | Error | null): void {
    if (this.state !== "pending") return;
    if (error === null) {
      try {
        this.onSettle?.();
      } catch (err) {
        error = err as Error;
      }
    }
    if (error === null) {
      this.state = "done";
      this.resolvers?.resolve();
    } else {
      this.state = "failed";
      this.error = typeof error === "string" ? new DistributedError(error) : error;
      this.resolvers?.reject(this.error);
    }
  }
}

/** The error every failed collective raises: its message names the collective, the ranks, the cause. */
export class DistributedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DistributedError";
  }
}
