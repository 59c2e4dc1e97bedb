import { workerData } from "node:worker_threads";
import { JsonlWriter } from "./jsonl.js";

/**
 * The system-metrics sampler (see system_metrics.ts). Step time is measured between the log calls
 * the training thread made since the last sample: (time of the newest step − time of the step
 * seen last sample) / steps between them, so it needs two logged steps.
 */
const { path, intervalMs, samplesPerStep, shared: sharedBuffer } = workerData as { path: string; intervalMs: number; samplesPerStep: number | null; shared: SharedArrayBuffer };
const shared = new Float64Array(sharedBuffer);
const writer = new JsonlWriter(path);
let prev = { step: shared[0], stepMs: shared[1], wallMs: Date.now(), cpu: process.cpuUsage() };

function sample(): void {
  const wallMs = Date.now();
  const cpu = process.cpuUsage();
  const step = shared[0];
  const stepMs = shared[1];
  const record: Record<string, number> = {
    _time: wallMs / 1000,
    step,
    "system/rss_mb": process.memoryUsage.rss() / 2 ** 20,
    "system/cpu_percent": (100 * (cpu.user - prev.cpu.user + cpu.system - prev.cpu.system)) / 1000 / (wallMs - prev.wallMs),
  };
  if (step > prev.step && stepMs > prev.stepMs) {
    const stepTime = (stepMs - prev.stepMs) / 1000 / (step - prev.step);
    record["system/step_time_s"] = stepTime;
    if (samplesPerStep !== null) record["system/samples_per_s"] = samplesPerStep / stepTime;
  }
  writer.append(record);
  prev = { step, stepMs, wallMs, cpu };
}

setInterval(sample, intervalMs);
