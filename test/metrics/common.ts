import { readFileSync } from "node:fs";
import { metrics } from "../../src/index.js";

export const EXPECTED = JSON.parse(readFileSync(new URL("../fixtures/text/metrics.expected.json", import.meta.url), "utf8"));

/** Every metric of the fixture, fed the samples i with keep(i) (one rank's share, or all). */
export function computeAll(keep: (i: number) => boolean) {
  const pick = <T>(a: readonly T[]) => a.filter((_, i) => keep(i));
  const cls = EXPECTED.classification.map((c: { preds: number[]; targets: number[]; numClasses: number }) => {
    const p = pick(c.preds);
    const t = pick(c.targets);
    const out: Record<string, unknown> = {
      accuracy: new metrics.Accuracy().update(p, t).compute(),
      macro: new metrics.PrecisionRecallF1({ average: "macro", numClasses: c.numClasses }).update(p, t).compute(),
      micro: new metrics.PrecisionRecallF1({ average: "micro", numClasses: c.numClasses }).update(p, t).compute(),
    };
    if (c.numClasses === 2) out.binary = new metrics.PrecisionRecallF1({ numClasses: 2 }).update(p, t).compute();
    return out;
  });
  const b = EXPECTED.bleu;
  const single = new metrics.BLEU().update(pick(b.hyps), pick(b.refs)).compute();
  const multi = new metrics.BLEU().update(pick(b.hyps), pick(b.refs.map((r: string, i: number) => [r, b.refs2[i]]))).compute();
  const wer = new metrics.WordErrorRate().update(pick(b.hyps), pick(b.refs)).compute();
  const cer = new metrics.CharErrorRate().update(pick(b.hyps), pick(b.refs)).compute();
  return { cls, single, multi, wer, cer };
}
