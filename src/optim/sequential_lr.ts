import { checkArity, checkOptions } from "../util/options.js";
import { LRScheduler, type AnyOptimizer } from "./lr_scheduler.js";

/**
 * Runs schedulers one after another, switching at the milestones (torch's SequentialLR): e.g. a
 * LinearLR warmup for 5 epochs, then a CosineAnnealingLR:
 * `new SequentialLR(opt, [warmup, cosine], [5])`. At a milestone the next scheduler
 * restarts from epoch 0 of its own schedule. Build the inner schedulers on the same optimizer
 * first; SequentialLR undoes the step their constructors took, as PyTorch does.
 */
export class SequentialLR extends LRScheduler {
  readonly schedulers: readonly LRScheduler[];
  readonly milestones: readonly number[];

  constructor(optimizer: AnyOptimizer, schedulers: LRScheduler[], milestones: number[], options: { lastEpoch?: number } = {}) {
    checkArity("SequentialLR", arguments, 4, "new optim.SequentialLR(optimizer, [schedulers], [milestones], { lastEpoch })");
    checkOptions("SequentialLR", options, ["lastEpoch"]);
    if (!Array.isArray(schedulers) || schedulers.length < 1) throw new TypeError("SequentialLR: schedulers must be a non-empty array of schedulers");
    schedulers.forEach((s, i) => {
      if (!(s instanceof LRScheduler)) throw new TypeError(`SequentialLR: schedulers[${i}] is not a learning-rate scheduler (ReduceLROnPlateau cannot be chained: its step needs a metric)`);
      if (s.optimizer !== optimizer) throw new Error(`SequentialLR: schedulers[${i}] (${s.constructor.name}) belongs to another optimizer; every scheduler must wrap the one given to SequentialLR`);
    });
    if (!Array.isArray(milestones) || milestones.length !== schedulers.length - 1 || milestones.some((m) => !Number.isInteger(m))) {
      throw new RangeError(`SequentialLR: expected ${schedulers.length - 1} integer milestone(s) (one fewer than the ${schedulers.length} schedulers), got ${JSON.stringify(milestones)}`);
    }
    super(optimizer, -1);
    this.schedulers = [...schedulers];
    this.milestones = [...milestones];
    this.lastEpoch = (options.lastEpoch ?? -1) + 1;
    for (const g of optimizer.paramGroups) g.lr = g.initialLr as number;
    for (const s of this.schedulers) undo(s);
    this.schedulers[this.indexAt(0)].restart();
    this.setLastLr(this.schedulers[this.indexAt(0)].getLastLr());
  }

  /** Python's bisect_right(milestones, epoch): how many milestones are ≤ epoch. */
  private indexAt(epoch: number): number {
    return this.milestones.filter((m) => m <= epoch).length;
  }

  protected getLr(): number[] {
    return this.getLastLr();
  }

  override step(...args: unknown[]): void {
    if (args.length > 0) throw new TypeError("SequentialLR.step: takes no arguments");
    this.stepCount++;
    this.lastEpoch++;
    const idx = this.indexAt(this.lastEpoch);
    const s = this.schedulers[idx];
    if (idx > 0 && this.milestones[idx - 1] === this.lastEpoch) s.updateLr(0);
    else s.step();
    this.setLastLr(s.getLastLr());
  }

  override stateDict(): Record<string, unknown> {
    return { ...super.stateDict(), _milestones: [...this.milestones], _schedulers: this.schedulers.map((s) => s.stateDict()) };
  }

  override loadStateDict(state: Record<string, unknown>): void {
    super.loadStateDict(state);
    const inner = state._schedulers;
    if (!Array.isArray(inner) || inner.length !== this.schedulers.length) {
      throw new Error(`SequentialLR.loadStateDict: expected ${this.schedulers.length} inner scheduler states in _schedulers`);
    }
    this.schedulers.forEach((s, i) => s.loadStateDict(inner[i] as Record<string, unknown>));
  }
}

function undo(s: LRScheduler): void {
  if (s instanceof SequentialLR) s.schedulers.forEach(undo);
  else s.lastEpoch -= 1;
}
