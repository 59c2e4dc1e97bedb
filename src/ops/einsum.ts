import { promoteTypes } from "../tensor/dtype.js";
import { formatShape } from "../tensor/shape.js";
import type { Tensor } from "../tensor/tensor.js";
import { to } from "./creation.js";
import { indexSelect } from "./indexing.js";
import { matmul } from "./matmul.js";
import { sum } from "./reduction.js";
import { assertTensor } from "./util.js";
import { expand, permute, reshape } from "./view.js";

// Labels are numbers: a letter's char code, or ELLIPSIS + k for the k-th dim (from the right)
// covered by "...". Sorting them puts the ellipsis dims first, then A–Z, then a–z, which is the
// implicit output order PyTorch uses.
const ELLIPSIS = -1000;

interface Term {
  labels: number[];
}

interface Operand {
  t: Tensor;
  labels: number[];
}

function parseTerm(term: string, ndim: number | null, equation: string): { letters: number[]; ellipsisAt: number } {
  const letters: number[] = [];
  let ellipsisAt = -1;
  for (let i = 0; i < term.length; ) {
    if (term.startsWith("...", i)) {
      if (ellipsisAt >= 0) throw new SyntaxError(`einsum: "${equation}": a term may hold one ellipsis (...)`);
      ellipsisAt = letters.length;
      i += 3;
      continue;
    }
    const ch = term[i];
    if (!/[a-zA-Z]/.test(ch)) throw new SyntaxError(`einsum: "${equation}": subscripts must be letters a-z, A-Z or "...", got "${ch}"`);
    letters.push(ch.charCodeAt(0));
    i++;
  }
  if (ndim !== null && (ellipsisAt < 0 ? letters.length !== ndim : letters.length > ndim)) {
    throw new RangeError(`einsum: "${equation}": the term "${term}" has ${letters.length} subscripts${ellipsisAt >= 0 ? " and an ellipsis" : ""} for an operand of ${ndim} dims`);
  }
  return { letters, ellipsisAt };
}

/** Expands a term's ellipsis into the labels of the dims it covers (right-aligned across operands). */
function withEllipsis(letters: number[], ellipsisAt: number, count: number): number[] {
  if (ellipsisAt < 0) return letters;
  const dots = Array.from({ length: count }, (_, k) => ELLIPSIS + (count - 1 - k));
  return [...letters.slice(0, ellipsisAt), ...dots, ...letters.slice(ellipsisAt)];
}

function labelName(l: number): string {
  return l < 0 ? "..." : String.fromCharCode(l);
}

/** The diagonal over every label repeated within one operand ("ii->i"), via reshape + indexSelect. */
function takeDiagonals(op: Operand): Operand {
  let { t, labels } = op;
  for (;;) {
    const i = labels.findIndex((l, k) => labels.indexOf(l) !== k);
    if (i < 0) return { t, labels };
    const first = labels.indexOf(labels[i]);
    const n = t.shape[first];
    if (t.shape[i] !== n) throw new RangeError(`einsum: subscript ${labelName(labels[i])} is repeated over dims of sizes ${n} and ${t.shape[i]}`);
    const rest = labels.map((_, k) => k).filter((k) => k !== first && k !== i);
    const moved = permute(t, [...rest, first, i]);
    const flat = reshape(moved, [...rest.map((k) => t.shape[k]), n * n]);
    const diag = Int32Array.from({ length: n }, (_, k) => k * (n + 1));
    t = indexSelect(flat, rest.length, diag);
    labels = [...rest.map((k) => labels[k]), labels[first]];
  }
}

/** Sums away the labels no later operand nor the output needs. */
function sumUnneeded(op: Operand, needed: Set<number>): Operand {
  const dims = op.labels.map((l, k) => (needed.has(l) ? -1 : k)).filter((k) => k >= 0);
  if (dims.length === 0) return op;
  return { t: sum(op.t, dims), labels: op.labels.filter((l) => needed.has(l)) };
}

function contract(a: Operand, b: Operand, needed: Set<number>, sizes: Map<number, number>): Operand {
  const inB = new Set(b.labels);
  const inA = new Set(a.labels);
  const batch = a.labels.filter((l) => inB.has(l) && needed.has(l));
  const summed = a.labels.filter((l) => inB.has(l) && !needed.has(l));
  const aOnly = a.labels.filter((l) => !inB.has(l));
  const bOnly = b.labels.filter((l) => !inA.has(l));
  const size = (ls: number[]) => ls.reduce((p, l) => p * sizes.get(l)!, 1);
  const arrange = (op: Operand, order: number[]) => permute(op.t, order.map((l) => op.labels.indexOf(l)));
  const a3 = reshape(arrange(a, [...batch, ...aOnly, ...summed]), [size(batch), size(aOnly), size(summed)]);
  const b3 = reshape(arrange(b, [...batch, ...summed, ...bOnly]), [size(batch), size(summed), size(bOnly)]);
  const product = matmul(a3, b3);
  const labels = [...batch, ...aOnly, ...bOnly];
  return { t: reshape(product, labels.map((l) => sizes.get(l)!)), labels };
}

/**
 * torch.einsum: sums of products over the subscripts of an equation such as "bij,bjk->bik",
 * "ii->i" (diagonal), "ij->" (sum) or "...ij,...jk" (with broadcast batch dims). Without "->",
 * the output holds the subscripts that appear once, in alphabetical order. Contracts the
 * operands left to right with permute, reshape and a batched matmul, so autograd gives the
 * gradients. Dims of size 1 broadcast against the same subscript's size elsewhere.
 */
export function einsum(equation: string, ...args: (Tensor | readonly Tensor[])[]): Tensor {
  if (typeof equation !== "string") throw new TypeError(`einsum: expected an equation string first, got ${typeof equation}`);
  const operands = (args.length === 1 && Array.isArray(args[0]) ? [...(args[0] as Tensor[])] : (args as Tensor[])) as Tensor[];
  operands.forEach((t, i) => assertTensor(t, "einsum", `operand ${i}`));
  const eq = equation.replace(/\s+/g, "");
  const arrow = eq.indexOf("->");
  const lhs = arrow >= 0 ? eq.slice(0, arrow) : eq;
  const terms = lhs.split(",");
  if (terms.length !== operands.length) {
    throw new RangeError(`einsum: "${equation}" has ${terms.length} input term(s) but ${operands.length} operand(s) were given`);
  }
  const parsed = terms.map((term, i) => parseTerm(term, operands[i].ndim, equation));
  const ellipsisDims = Math.max(0, ...parsed.map((p, i) => (p.ellipsisAt >= 0 ? operands[i].ndim - p.letters.length : 0)));
  const inputs: Term[] = parsed.map((p, i) => ({ labels: withEllipsis(p.letters, p.ellipsisAt, operands[i].ndim - p.letters.length) }));

  let output: number[];
  if (arrow >= 0) {
    const out = parseTerm(eq.slice(arrow + 2), null, equation);
    if (new Set(out.letters).size !== out.letters.length) throw new SyntaxError(`einsum: "${equation}": a subscript appears twice in the output`);
    // Ellipsis dims left out of an explicit output are summed, as in PyTorch.
    output = withEllipsis(out.letters, out.ellipsisAt, ellipsisDims);
  } else {
    const counts = new Map<number, number>();
    inputs.forEach((t) => t.labels.forEach((l) => counts.set(l, (counts.get(l) ?? 0) + 1)));
    const dots = Array.from({ length: ellipsisDims }, (_, k) => ELLIPSIS + (ellipsisDims - 1 - k));
    output = [...dots, ...[...counts].filter(([l, c]) => c === 1 && l > 0).map(([l]) => l).sort((a, b) => a - b)];
  }

  const sizes = new Map<number, number>();
  inputs.forEach((term, i) =>
    term.labels.forEach((l, k) => {
      const s = operands[i].shape[k];
      const known = sizes.get(l);
      if (known === undefined || known === 1) sizes.set(l, s);
      else if (s !== known && s !== 1) {
        throw new RangeError(`einsum: "${equation}": subscript ${labelName(l)} has size ${known} in one operand and ${s} in operand ${i} (${formatShape(operands[i].shape)})`);
      }
    }),
  );
  for (const l of output) {
    if (!sizes.has(l)) throw new RangeError(`einsum: "${equation}": output subscript ${labelName(l)} does not appear in any input`);
  }

  const dtype = operands.map((t) => t.dtype).reduce(promoteTypes);
  const ops: Operand[] = operands.map((t, i) => {
    const op = takeDiagonals({ t: to(t, dtype), labels: inputs[i].labels });
    // Size-1 dims broadcast: expand (a view) to the subscript's full size.
    const full = op.labels.map((l) => sizes.get(l)!);
    return { t: full.some((s, k) => s !== op.t.shape[k]) ? expand(op.t, full) : op.t, labels: op.labels };
  });
  const neededAfter = (from: number): Set<number> => new Set([...output, ...ops.slice(from).flatMap((o) => o.labels)]);
  let acc = sumUnneeded(ops[0], neededAfter(1));
  for (let i = 1; i < ops.length; i++) {
    const later = neededAfter(i + 1);
    const next = sumUnneeded(ops[i], new Set([...later, ...acc.labels]));
    acc = sumUnneeded(acc, new Set([...later, ...next.labels]));
    acc = contract(acc, next, later, sizes);
  }
  acc = sumUnneeded(acc, new Set(output));
  return permute(acc.t, output.map((l) => acc.labels.indexOf(l)));
}
