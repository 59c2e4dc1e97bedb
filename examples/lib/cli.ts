// Flag parsing shared by the examples: `--batch-size 8` fills `batchSize`, typed by its default;
// an unknown flag or a value of the wrong kind is an error that lists what the script takes.

export type FlagValue = string | number | boolean;

export function parseFlags<T extends Record<string, FlagValue>>(script: string, argv: readonly string[], defaults: T): T {
  const out: Record<string, FlagValue> = { ...defaults };
  const kebab = (k: string) => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const known = new Map(Object.keys(defaults).map((k) => [`--${kebab(k)}`, k]));
  for (let i = 0; i < argv.length; i++) {
    const key = known.get(argv[i]);
    if (!key) throw new Error(`${script}: unknown argument "${argv[i]}"; it takes ${[...known.keys()].join(", ")}`);
    const fallback = defaults[key];
    if (typeof fallback === "boolean") {
      out[key] = true;
      continue;
    }
    const raw = argv[++i];
    if (raw === undefined) throw new Error(`${script}: ${argv[i - 1]} needs a value`);
    if (typeof fallback === "number") {
      const v = Number(raw);
      if (!Number.isFinite(v) || v < 0) throw new Error(`${script}: ${argv[i - 1]} must be a non-negative number, got "${raw}"`);
      out[key] = v;
    } else out[key] = raw;
  }
  return out as T;
}

/** console.log on rank 0 only. */
export function say(rank: number, ...parts: unknown[]): void {
  if (rank === 0) console.log(...parts);
}
