import { JsonlWriter } from "./jsonl.js";

/**
 * One system sample, shared by the sampler thread and the training thread's last sample at
 * finish. State lives in shared memory so that either thread continues from the other's last
 * sample; a lock keeps the two from sampling at once.
 *
 * Float64 slots: 0 last logged step, 1 its wall time (ms), 2 log calls, 3 step at the previous
 * sample, 4 that step's wall time, 5 wall time of the previous sample, 6 CPU µs used by then,
 * 7 ms the training thread had waited on communication at the last logged step, 8 the same at 3.
 */
export const SHARED_FLOATS = 9;

export class SampleState {
  readonly f: Float64Array;
  private readonly lock: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(8 * SHARED_FLOATS + 8)) {
    this.f = new Float64Array(buffer, 0, SHARED_FLOATS);
    this.lock = new Int32Array(buffer, 8 * SHARED_FLOATS, 1);
  }

  init(step: number, commWaitMs: number): void {
    const now = Date.now();
    const cpu = process.cpuUsage();
    this.f.set([step, now, 0, step, now, now, cpu.user + cpu.system, commWaitMs, commWaitMs]);
  }

  /** Appends a sample to `writer` unless the other thread is sampling right now. */
  sample(writer: JsonlWriter, samplesPerStep: number | null): void {
    if (Atomics.compareExchange(this.lock, 0, 0, 1) !== 0) return;
    try {
      const f = this.f;
      const wallMs = Date.now();
      const cpu = process.cpuUsage();
      const cpuUs = cpu.user + cpu.system;
      const [step, stepMs] = [f[0], f[1]];
      const record: Record<string, number> = {
        _time: wallMs / 1000,
        step,
        "system/rss_mb": process.memoryUsage.rss() / 2 ** 20,
        // Every thread of the process: 100 is one core busy.
        "system/cpu_percent": wallMs > f[5] ? (100 * (cpuUs - f[6])) / 1000 / (wallMs - f[5]) : 0,
      };
      if (step > f[3] && stepMs > f[4]) {
        const stepTime = (stepMs - f[4]) / 1000 / (step - f[3]);
        record["system/step_time_s"] = stepTime;
        if (samplesPerStep !== null) record["system/samples_per_s"] = samplesPerStep / stepTime;
        // Share of those steps' wall time the training thread spent blocked on collectives.
        record["system/comm_wait_percent"] = (100 * (f[7] - f[8])) / (stepMs - f[4]);
        f[3] = step;
        f[4] = stepMs;
        f[8] = f[7];
      }
      f[5] = wallMs;
      f[6] = cpuUs;
      writer.append(record);
    } finally {
      Atomics.store(this.lock, 0, 0);
    }
  }
}
