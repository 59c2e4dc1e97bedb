/**
 * One run-time check for every public options object and positional-argument list.
 *
 * A porter transliterates PyTorch: `{ ignore_index: 0 }`, `{ bucket_cap_mb: 25 }`, or
 * `new StepLR(opt, 10, 0.5)` where ringtorch takes `{ stepSize, gamma }`. TypeScript catches
 * these only when someone runs `tsc`, and ringrun never does, so an unchecked object silently
 * runs with defaults. Every public constructor and function that takes options calls
 * `checkOptions` (and `checkArity` where extra positional arguments would be dropped).
 */

/** Throws a TypeError naming each key of `options` that is not in `known`, with the likeliest intended key. */
export function checkOptions(where: string, options: unknown, known: readonly string[]): void {
  if (options === undefined || options === null) return;
  if (typeof options !== "object" || Array.isArray(options) || ArrayBuffer.isView(options)) {
    throw new TypeError(`${where}: options must be an object such as { ${known.slice(0, 2).join(", ")} }, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const guess = closestKey(key, known);
    const hint = guess ? `; did you mean ${guess}?` : known.length > 0 ? `; known options: ${known.join(", ")}` : "; it takes no options";
    throw new TypeError(`${where}: unknown option "${key}"${hint}`);
  }
}

/**
 * Throws when a call received more positional arguments than its signature has: the extras
 * would be silently ignored (a PyTorch positional such as StepLR's gamma belongs in the options).
 */
export function checkArity(where: string, args: ArrayLike<unknown>, max: number, usage: string): void {
  if (args.length <= max) return;
  const extra = Array.from(args).slice(max).map(describe).join(", ");
  throw new TypeError(`${where}: too many arguments (${args.length}, at most ${max}); the extra ${extra} would be ignored. Call it as ${usage}`);
}

/** The known key a mistyped or snake_case key most likely meant, or undefined when none is close. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const camel = snakeToCamel(key);
  const exact = known.find((k) => k === camel || k.toLowerCase() === key.toLowerCase() || k.toLowerCase() === camel.toLowerCase());
  if (exact) return exact;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(camel.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  // Beyond about a third of the word, a suggestion misleads more than it helps.
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

function snakeToCamel(key: string): string {
  return key.replace(/[_-]+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "function") return "a function";
  if (typeof v === "object") return v.constructor?.name && v.constructor.name !== "Object" ? `a ${v.constructor.name}` : "an object";
  return `${typeof v} ${String(v)}`;
}
