/**
 * Corpus BLEU as sacrebleu computes it by default (13a tokenization, 4-gram, "exp" smoothing,
 * brevity penalty against the closest reference length). Its counts (matched and total n-grams of
 * each order, hypothesis and reference lengths) are integers summed over segments and ranks.
 */
import { checkOptions } from "../util/options.js";
import { CountMetric } from "./metric.js";

const ORDER = 4;

/** sacrebleu's tokenizer_13a (mteval-v13a's): punctuation split off, except periods and commas inside numbers. */
export function tokenize13a(line: string): string {
  line = line.replaceAll("<skipped>", "").replaceAll("-\n", "").replaceAll("\n", " ");
  if (line.includes("&")) line = line.replaceAll("&quot;", '"').replaceAll("&amp;", "&").replaceAll("&lt;", "<").replaceAll("&gt;", ">");
  line = ` ${line} `;
  line = line.replace(/([{-~[-` -&(-+:-@/])/g, " $1 ");
  line = line.replace(/([^0-9])([.,])/g, "$1 $2 ");
  line = line.replace(/([.,])([^0-9])/g, " $1 $2");
  line = line.replace(/([0-9])(-)/g, "$1 $2 ");
  return line.split(/\s+/).filter((w) => w.length > 0).join(" ");
}

function ngrams(tokens: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (let n = 1; n <= ORDER; n++) {
    for (let i = 0; i + n <= tokens.length; i++) {
      // Order n is part of the key through the count of separators; \u0001 never occurs in tokens.
      const k = tokens.slice(i, i + n).join("\u0001");
      m.set(k, (m.get(k) ?? 0) + 1);
    }
  }
  return m;
}

export interface BleuScore {
  score: number;
  precisions: number[];
  bp: number;
  sysLen: number;
  refLen: number;
}

/** Counts: [sysLen, refLen, correct1..4, total1..4]. */
export class BLEU extends CountMetric<BleuScore> {
  readonly lowercase: boolean;
  constructor(options: { lowercase?: boolean } = {}) {
    checkOptions("BLEU", options, ["lowercase"]);
    super(2 + 2 * ORDER);
    this.lowercase = options.lowercase ?? false;
  }
  /** One reference per hypothesis (strings), or several (arrays of strings). */
  update(hypotheses: readonly string[], references: readonly (string | readonly string[])[]): this {
    if (hypotheses.length !== references.length) throw new RangeError(`BLEU.update: ${hypotheses.length} hypotheses but ${references.length} references`);
    const prep = (s: string) => tokenize13a((this.lowercase ? s.toLowerCase() : s).trimEnd()).split(" ").filter((w) => w.length > 0);
    hypotheses.forEach((h, i) => {
      const refs = typeof references[i] === "string" ? [references[i] as string] : (references[i] as readonly string[]);
      const refCounts = new Map<string, number>();
      const refLens: number[] = [];
      for (const r of refs) {
        const toks = prep(r);
        refLens.push(toks.length);
        for (const [k, c] of ngrams(toks)) refCounts.set(k, Math.max(refCounts.get(k) ?? 0, c));
      }
      const hyp = prep(h);
      let refLen = -1;
      let diff = -1;
      for (const l of refLens) {
        const d = Math.abs(hyp.length - l);
        if (diff === -1 || d < diff || (d === diff && l < refLen)) [diff, refLen] = [d, l];
      }
      this.counts[0] += hyp.length;
      this.counts[1] += refLen;
      for (const [k, c] of ngrams(hyp)) {
        const n = k.split("\u0001").length - 1;
        this.counts[2 + ORDER + n] += c;
        this.counts[2 + n] += Math.min(c, refCounts.get(k) ?? 0);
      }
    });
    return this;
  }
  fromCounts(counts: readonly number[]): BleuScore {
    const [sysLen, refLen] = counts;
    const correct = counts.slice(2, 2 + ORDER);
    const total = counts.slice(2 + ORDER);
    const bp = sysLen < refLen ? (sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0) : 1;
    const precisions = new Array<number>(ORDER).fill(0);
    if (!correct.some((c) => c > 0)) return { score: 0, precisions, bp, sysLen, refLen };
    let smooth = 1;
    for (let n = 0; n < ORDER; n++) {
      if (total[n] === 0) break;
      if (correct[n] === 0) {
        smooth *= 2;
        precisions[n] = 100 / (smooth * total[n]);
      } else precisions[n] = (100 * correct[n]) / total[n];
    }
    const log = (p: number) => (p === 0 ? -9999999999 : Math.log(p));
    const score = bp * Math.exp(precisions.reduce((s, p) => s + log(p), 0) / ORDER);
    return { score, precisions, bp, sysLen, refLen };
  }
}
