/** tqdm's text pieces: `desc: 45%|████▌     | 45/100 [00:04<00:05, 10.12it/s, loss=0.3]`. */

/** tqdm's format_interval: m:ss under an hour, else h:mm:ss; minutes always two digits. */
export function formatInterval(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const two = (x: number) => String(x).padStart(2, "0");
  return h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${two(m)}:${two(sec)}`;
}

/** Rate as tqdm shows it (`{:5.2f}`): `12.34it/s`, or ` 2.50s/it` when slower than one per second. */
export function formatRate(rate: number | null, unit: string): string {
  if (!rate || !Number.isFinite(rate)) return `?${unit}/s`;
  return rate >= 1 ? `${rate.toFixed(2).padStart(5)}${unit}/s` : `${(1 / rate).toFixed(2).padStart(5)}s/${unit}`;
}

const BLOCKS = " ▏▎▍▌▋▊▉█";

/** A bar `width` characters wide, filled to `fraction` with eighth-blocks. */
export function formatBar(fraction: number, width: number): string {
  const f = Math.min(1, Math.max(0, fraction));
  const eighths = Math.floor(f * width * 8);
  const full = Math.floor(eighths / 8);
  const partial = eighths % 8;
  const bar = "█".repeat(full) + (full < width && partial > 0 ? BLOCKS[partial] : "");
  return bar + " ".repeat(width - bar.length);
}

export function formatPostfix(postfix: Record<string, unknown>): string {
  const parts = Object.entries(postfix).map(([k, v]) => `${k}=${typeof v === "number" ? formatNum(v) : String(v).trim()}`);
  return parts.length > 0 ? `, ${parts.join(", ")}` : "";
}

/** tqdm's format_num: Python's `{:.3g}` with exponents shortened (e+04 → e+4), unless the plain number is shorter. */
export function formatNum(v: number): string {
  const plain = String(v);
  if (!Number.isFinite(v) || v === 0) return plain;
  const exp = Math.floor(Math.log10(Math.abs(Number(v.toPrecision(3)))));
  let g: string;
  if (exp < -4 || exp >= 3) {
    // JavaScript already writes exponents without the leading zero tqdm strips from Python's.
    const [mant, e] = v.toExponential(2).split("e");
    g = `${mant.replace(/\.?0+$/, "")}e${e}`;
  } else g = String(Number(v.toFixed(Math.max(0, 2 - exp))));
  return g.length < plain.length ? g : plain;
}

export interface BarState {
  desc: string;
  n: number;
  total: number | null;
  elapsed: number;
  rate: number | null;
  unit: string;
  postfix: Record<string, unknown>;
}

/** One line, at most `columns` wide (the bar takes what the text leaves). */
export function formatLine(s: BarState, columns: number): string {
  const prefix = s.desc ? `${s.desc}: ` : "";
  const post = formatPostfix(s.postfix);
  if (s.total === null || s.total <= 0) {
    return [...`${prefix}${s.n}${s.unit} [${formatInterval(s.elapsed)}, ${formatRate(s.rate, s.unit)}${post}]`].slice(0, columns).join("");
  }
  const fraction = s.n / s.total;
  const remaining = s.rate ? (s.total - s.n) / s.rate : NaN;
  const left = `${prefix}${(fraction * 100).toFixed(0).padStart(3)}%|`;
  const right = `| ${s.n}/${s.total} [${formatInterval(s.elapsed)}<${formatInterval(remaining)}, ${formatRate(s.rate, s.unit)}${post}]`;
  // As tqdm: the bar takes what the text leaves of the line (at least one cell), and the line is cut to fit.
  const width = Math.max(1, columns - [...left].length - [...right].length);
  return [...`${left}${formatBar(fraction, width)}${right}`].slice(0, columns).join("");
}
