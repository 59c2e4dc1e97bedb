import { join } from "node:path";
import { init as trackInit } from "../track/init.js";
import { Progress } from "../track/progress.js";
import type { Run } from "../track/run.js";
import type { TrainingArguments } from "./training_arguments.js";

/**
 * The Trainer's output to a person: a progress bar of optimizer steps on rank 0, and, with
 * reportTo "jsonl" or "tensorboard", a tracking run (rank 0 only) under outputDir/runs. On resume
 * the run continues under the launcher's run id and drops records after the checkpoint's step,
 * so that the resumed steps are not logged twice.
 */
export class TrainerReporter {
  private bar: Progress<unknown> | null;
  private readonly run: Run | null;
  private shown: number;

  /** `runId`: the run a resumed checkpoint was logging to (default: the launcher's run id). */
  constructor(args: TrainingArguments, rank: number, maxSteps: number, startStep: number, runId?: string) {
    this.bar = args.disableTqdm || rank !== 0 ? null : new Progress(null, { total: maxSteps, desc: "train", unit: "step", disable: false });
    this.bar?.update(startStep);
    this.shown = startStep;
    this.run =
      args.reportTo.length === 0
        ? null
        : trackInit({
            project: "trainer",
            dir: join(args.outputDir, "runs"),
            mode: "rank0",
            resume: "allow",
            resumeFrom: startStep,
            tensorboard: args.reportTo.includes("tensorboard"),
            systemMetrics: false,
            config: args.toJSON(),
            ...(args.runName ? { name: args.runName } : {}),
            ...(runId ? { id: runId } : {}),
          });
  }

  /** HF's names as track groups: eval_loss → eval/loss, loss → train/loss. */
  log(logs: Record<string, number>, step: number): void {
    this.advance(step);
    if (typeof logs.loss === "number") this.bar?.setPostfix({ loss: logs.loss.toFixed(4) });
    if (!this.run) return;
    const named: Record<string, number> = {};
    for (const [k, v] of Object.entries(logs)) named[k.startsWith("eval_") ? `eval/${k.slice(5)}` : k.startsWith("test_") ? `test/${k.slice(5)}` : `train/${k}`] = v;
    this.run.log(named, { step });
  }

  /** Moves the bar to optimizer step `step`. */
  advance(step: number): void {
    if (this.bar && step > this.shown) {
      this.bar.update(step - this.shown);
      this.shown = step;
    }
  }

  /**
   * Ends the progress bar. The run stays open, so that an evaluate() after train() is logged to
   * it too; track finishes it (writes its summary) when the process exits.
   */
  closeBar(): void {
    this.bar?.close();
  }

  /** Finishes the run (before a second train() starts its own). */
  finish(): void {
    this.bar?.close();
    if (this.run && !this.run.isFinished) this.run.finish();
  }
}
