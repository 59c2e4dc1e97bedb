/** Shared helpers of the benchmarks: medians and an aligned table with ratios. */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function cell(v: string | number): string {
  if (typeof v === "string") return v;
  if (Number.isNaN(v)) return "n/a";
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

/** Prints rows under a header; numbers are rounded for reading, ratios are plain numbers ("1.50" = 1.5×). */
export function printTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  const text = [header, ...rows.map((r) => r.map(cell))];
  const widths = header.map((_, c) => Math.max(...text.map((r) => String(r[c]).length)));
  for (const [i, r] of text.entries()) {
    console.log(r.map((v, c) => (c === 0 ? String(v).padEnd(widths[c]) : String(v).padStart(widths[c]))).join("  "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }
}
