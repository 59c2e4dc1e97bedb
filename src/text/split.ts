/**
 * Hugging Face's SplitDelimiterBehavior: how the pieces a pattern matched join the text around
 * them. Empty pieces are dropped, as in Hugging Face.
 */
export type SplitBehavior = "Removed" | "Isolated" | "MergedWithPrevious" | "MergedWithNext" | "Contiguous";
export const SPLIT_BEHAVIORS: readonly SplitBehavior[] = ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"];

/** Splits s at the matches of a global regex (each match is one delimiter). */
export function splitBy(s: string, re: RegExp, behavior: SplitBehavior, invert = false, out: string[] = []): string[] {
  // Pieces as [text, isDelimiter].
  const pieces: [string, boolean][] = [];
  let last = 0;
  re.lastIndex = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (m.index > last) pieces.push([s.slice(last, m.index), invert]);
    pieces.push([m[0], !invert]);
    last = m.index + m[0].length;
  }
  if (last < s.length) pieces.push([s.slice(last), invert]);
  return applyBehavior(pieces, behavior, out);
}

export function applyBehavior(pieces: [string, boolean][], behavior: SplitBehavior, out: string[]): string[] {
  switch (behavior) {
    case "Removed":
      for (const [t, d] of pieces) if (!d && t.length > 0) out.push(t);
      return out;
    case "Isolated":
      for (const [t] of pieces) if (t.length > 0) out.push(t);
      return out;
    case "Contiguous": {
      let prevDelim = false;
      const start = out.length;
      for (const [t, d] of pieces) {
        if (d && prevDelim && out.length > start) out[out.length - 1] += t;
        else out.push(t);
        prevDelim = d;
      }
      return out;
    }
    case "MergedWithPrevious": {
      const start = out.length;
      let prevDelim = false;
      for (const [t, d] of pieces) {
        if (d && !prevDelim && out.length > start) out[out.length - 1] += t;
        else out.push(t);
        prevDelim = d;
      }
      return out;
    }
    case "MergedWithNext": {
      // Hugging Face folds from the end: a delimiter joins the piece after it unless that piece is itself a delimiter.
      const rev: string[] = [];
      let nextDelim = false;
      for (let i = pieces.length - 1; i >= 0; i--) {
        const [t, d] = pieces[i];
        if (d && !nextDelim && rev.length > 0) rev[rev.length - 1] = t + rev[rev.length - 1];
        else rev.push(t);
        nextDelim = d;
      }
      for (let i = rev.length - 1; i >= 0; i--) out.push(rev[i]);
      return out;
    }
  }
}
