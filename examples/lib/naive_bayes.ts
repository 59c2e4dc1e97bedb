// The baseline the classifier example prints beside BERT: multinomial naive Bayes over token ids
// with add-one smoothing, trained and scored on the same split.

export interface Doc {
  inputIds: readonly number[];
  label: number;
}

/** Predicted class of each test document (0 or 1). */
export function naiveBayes(train: readonly Doc[], test: readonly Doc[], vocab: number): number[] {
  const counts = [new Float64Array(vocab), new Float64Array(vocab)];
  const totals = [0, 0];
  const docs = [0, 0];
  for (const d of train) {
    docs[d.label]++;
    for (const id of d.inputIds) {
      counts[d.label][id]++;
      totals[d.label]++;
    }
  }
  const prior = docs.map((n) => Math.log((n + 1) / (train.length + 2)));
  const logp = counts.map((c, k) => Float64Array.from(c, (x) => Math.log((x + 1) / (totals[k] + vocab))));
  return test.map((d) => {
    const score = [0, 1].map((k) => d.inputIds.reduce((s, id) => s + logp[k][id], prior[k]));
    return score[1] > score[0] ? 1 : 0;
  });
}
