/**
 * `run.defineMetric` in W&B's meaning: a name or a glob (`train/*`) whose values are plotted
 * against another metric (`stepMetric`) instead of the run's own step, and which summary value
 * the run keeps for it.
 */
export type SummaryKind = "last" | "min" | "max" | "mean" | "first" | "none";

export interface MetricDefinition {
  name: string;
  stepMetric?: string;
  summary?: SummaryKind;
}

export const SUMMARY_KINDS: readonly SummaryKind[] = ["last", "min", "max", "mean", "first", "none"];

/** Glob to RegExp: `*` matches any run of characters (slashes too, as in W&B). */
function globToRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

export class MetricDefinitions {
  private readonly defs: { def: MetricDefinition; re: RegExp }[] = [];

  constructor(initial: readonly MetricDefinition[] = []) {
    for (const d of initial) this.add(d);
  }

  add(def: MetricDefinition): void {
    const i = this.defs.findIndex((d) => d.def.name === def.name);
    const entry = { def, re: globToRegExp(def.name) };
    if (i >= 0) this.defs[i] = entry;
    else this.defs.push(entry);
  }

  /** The definition that applies to `metric`: an exact name wins over a glob, a later glob over an earlier one. */
  lookup(metric: string): MetricDefinition | undefined {
    const exact = this.defs.find((d) => d.def.name === metric);
    if (exact) return exact.def;
    for (let i = this.defs.length - 1; i >= 0; i--) if (this.defs[i].re.test(metric)) return this.defs[i].def;
    return undefined;
  }

  list(): MetricDefinition[] {
    return this.defs.map((d) => d.def);
  }
}

/** Keeps each metric's summary value as values arrive. */
export class SummaryTracker {
  private readonly means = new Map<string, { sum: number; n: number }>();

  constructor(
    private readonly defs: MetricDefinitions,
    readonly values: Record<string, unknown>,
  ) {}

  update(metric: string, value: number | string): void {
    const kind = this.defs.lookup(metric)?.summary ?? "last";
    const old = this.values[metric];
    if (kind === "none") return;
    if (typeof value !== "number" || kind === "last") {
      this.values[metric] = value;
      return;
    }
    if (kind === "first") {
      if (old === undefined) this.values[metric] = value;
    } else if (kind === "min") {
      if (typeof old !== "number" || value < old) this.values[metric] = value;
    } else if (kind === "max") {
      if (typeof old !== "number" || value > old) this.values[metric] = value;
    } else {
      const m = this.means.get(metric) ?? { sum: 0, n: 0 };
      m.sum += value;
      m.n++;
      this.means.set(metric, m);
      this.values[metric] = m.sum / m.n;
    }
  }
}
