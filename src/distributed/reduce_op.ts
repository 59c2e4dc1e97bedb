/** torch.distributed.ReduceOp, in the names torch uses. */
export const ReduceOp = {
  SUM: "sum",
  AVG: "avg",
  PRODUCT: "product",
  MIN: "min",
  MAX: "max",
} as const;

export type ReduceOpName = (typeof ReduceOp)[keyof typeof ReduceOp];

/** The native reduction each op runs; AVG sums and then divides. */
export const NATIVE_OP: Record<ReduceOpName, number> = { sum: 0, avg: 0, product: 1, min: 2, max: 3 };

export function checkReduceOp(op: unknown, where: string): ReduceOpName {
  if (typeof op === "string" && (Object.values(ReduceOp) as string[]).includes(op)) return op as ReduceOpName;
  throw new Error(`${where}: op must be one of dist.ReduceOp.{SUM, AVG, PRODUCT, MIN, MAX}, got ${String(op)}`);
}
