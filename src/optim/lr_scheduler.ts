import type { Optimizer } from "./optimizer.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOptimizer = Optimizer<any>;

/**
 * Base of the learning-rate schedulers (torch.optim.lr_scheduler.LRScheduler). A scheduler
 * writes each group's `lr` on every step(); call it once per epoch or per batch, after
 * optimizer.step(), as in PyTorch.
 *
 * Subclasses set their own fields and then call `initialStep()` at the end of their constructor
 * (PyTorch's does this in the base constructor, which runs after the subclass's fields are set;
 * in JavaScript the base constructor runs first).
 */
export abstract class LRScheduler {
  readonly optimizer: AnyOptimizer;
  lastEpoch: number;
  baseLrs: number[];
  protected stepCount = 0;
  /** True during the step the constructor takes (PyTorch's _is_initial): some schedules keep the lr there. */
  protected isInitial = false;
  private lastLr: number[] = [];

  constructor(optimizer: AnyOptimizer, lastEpoch = -1) {
    if (!optimizer || !Array.isArray(optimizer.paramGroups)) throw new TypeError(`${this.constructor.name}: expected an Optimizer`);
    this.optimizer = optimizer;
    const groups = optimizer.paramGroups as Record<string, unknown>[];
    if (lastEpoch === -1) {
      for (const g of groups) if (g.initialLr === undefined) g.initialLr = g.lr;
    } else {
      groups.forEach((g, i) => {
        if (g.initialLr === undefined) throw new Error(`${this.constructor.name}: param group ${i} has no initialLr; it is required when resuming with lastEpoch = ${lastEpoch}`);
      });
    }
    this.baseLrs = groups.map((g) => g.initialLr as number);
    this.lastEpoch = lastEpoch;
  }

  /** The learning rates for the current lastEpoch (PyTorch's get_lr). */
  protected abstract getLr(): number[];

  /**
   * The learning rates at lastEpoch from base_lrs alone (PyTorch's _get_closed_form_lr), for
   * schedules that have one; SequentialLR uses it to restart a schedule at a milestone.
   */
  protected closedFormLr(): number[] | null {
    return null;
  }

  protected initialStep(): void {
    this.stepCount = 0;
    this.isInitial = true;
    try {
      this.step();
    } finally {
      this.isInitial = false;
    }
  }

  step(...args: unknown[]): void {
    if (args.length > 0) {
      throw new TypeError(`${this.constructor.name}.step: takes no arguments (PyTorch's step(epoch) is deprecated; ReduceLROnPlateau.step(metric) is the one that takes a value)`);
    }
    this.stepCount++;
    this.updateLr();
  }

  /** Advances one epoch, or jumps to `epoch` using the closed form where there is one (PyTorch's _update_lr). */
  updateLr(epoch?: number): void {
    let lrs: number[];
    if (epoch === undefined) {
      this.lastEpoch++;
      lrs = this.getLr();
    } else {
      this.lastEpoch = epoch;
      lrs = this.closedFormLr() ?? this.getLr();
    }
    this.optimizer.paramGroups.forEach((g, i) => (g.lr = lrs[i]));
    this.lastLr = this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** Takes the constructor's initial step again (SequentialLR starts a chained scheduler with it, as PyTorch's _initial_step). */
  restart(): void {
    this.initialStep();
  }

  protected setLastLr(lrs: readonly number[]): void {
    this.lastLr = [...lrs];
  }

  /** The learning rates the last step() set, one per group. */
  getLastLr(): number[] {
    return [...this.lastLr];
  }

  /** Fields specific to a scheduler, by PyTorch's names, for the state dict. */
  protected extraState(): Record<string, unknown> {
    return {};
  }

  protected loadExtraState(_state: Record<string, unknown>): void {}

  /** The scheduler's progress (lambdas and the optimizer are not included, as in PyTorch). */
  stateDict(): Record<string, unknown> {
    return { last_epoch: this.lastEpoch, _step_count: this.stepCount, base_lrs: [...this.baseLrs], _last_lr: [...this.lastLr], ...this.extraState() };
  }

  loadStateDict(state: Record<string, unknown>): void {
    const where = `${this.constructor.name}.loadStateDict`;
    if (!state || typeof state !== "object" || typeof state.last_epoch !== "number" || !Array.isArray(state.base_lrs)) {
      throw new TypeError(`${where}: expected an object from stateDict() with last_epoch and base_lrs`);
    }
    if (state.base_lrs.length !== this.optimizer.paramGroups.length) {
      throw new Error(`${where}: the state has ${state.base_lrs.length} base learning rate(s) but the optimizer has ${this.optimizer.paramGroups.length} group(s)`);
    }
    this.lastEpoch = state.last_epoch;
    this.stepCount = typeof state._step_count === "number" ? state._step_count : this.lastEpoch + 1;
    this.baseLrs = [...(state.base_lrs as number[])];
    this.lastLr = Array.isArray(state._last_lr) ? [...(state._last_lr as number[])] : [];
    this.loadExtraState(state);
  }
}

/** Python's a % b (the result takes b's sign), which PyTorch's schedule formulas rely on. */
export function pyMod(a: number, b: number): number {
  return ((a % b) + b) % b;
}
