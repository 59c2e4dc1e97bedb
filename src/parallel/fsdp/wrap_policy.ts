import type { Module } from "../../nn/module.js";

/**
 * Decides which submodules become FSDP units of their own (FSDP1's auto_wrap_policy). It sees
 * each submodule bottom-up, with its dotted name and how many of its subtree's parameter
 * elements no inner unit has taken yet.
 */
export type AutoWrapPolicy = (module: Module, name: string, nonwrappedNumel: number) => boolean;

/** Wraps every submodule of these classes (a Transformer block): torch's ModuleWrapPolicy. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function moduleWrapPolicy(classes: Iterable<abstract new (...args: any[]) => Module>): AutoWrapPolicy {
  const list = [...classes];
  if (list.length === 0 || list.some((c) => typeof c !== "function")) throw new TypeError("moduleWrapPolicy: expected a list of Module classes, e.g. moduleWrapPolicy([Block])");
  return (m) => list.some((c) => m instanceof c);
}

/** Wraps a submodule once its not-yet-wrapped parameters reach minNumParams elements: torch's size_based_auto_wrap_policy. */
export function sizeBasedAutoWrapPolicy(options: { minNumParams?: number } = {}): AutoWrapPolicy {
  const min = options.minNumParams ?? 1e8;
  if (!(min > 0)) throw new RangeError(`sizeBasedAutoWrapPolicy: minNumParams must be positive, got ${min}`);
  return (_m, _name, nonwrapped) => nonwrapped >= min;
}

/** Wraps the submodules for which fn returns true: torch's lambda_auto_wrap_policy. */
export function lambdaAutoWrapPolicy(fn: (module: Module) => boolean): AutoWrapPolicy {
  if (typeof fn !== "function") throw new TypeError("lambdaAutoWrapPolicy: expected a function (module) => boolean");
  return (m) => fn(m) === true;
}

/**
 * Applies `policy` bottom-up to the strict submodules of `root`, calling `wrap` on each chosen one
 * (its parameters leave the count of its ancestors). Returns the chosen modules, innermost first.
 */
export function applyWrapPolicy(root: Module, policy: AutoWrapPolicy, wrap: (m: Module) => void): Module[] {
  const chosen: Module[] = [];
  const seen = new Set<Module>();
  const visit = (m: Module, name: string): number => {
    if (seen.has(m)) return 0;
    seen.add(m);
    let nonwrapped = m.localParameters().reduce((n, [, p]) => n + p.numel, 0);
    for (const [key, child] of m.namedChildren()) nonwrapped += visit(child, name ? `${name}.${key}` : key);
    if (m !== root && policy(m, name, nonwrapped)) {
      wrap(m);
      chosen.push(m);
      return 0;
    }
    return nonwrapped;
  };
  visit(root, "");
  return chosen;
}
