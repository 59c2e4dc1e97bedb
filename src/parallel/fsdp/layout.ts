import { formatShape } from "../../tensor/shape.js";

/**
 * Where one parameter's rows lie across the ranks of a shard group, as FSDP2 cuts them
 * (torch.chunk on dim 0): every rank holds `chunkRows` = ceil(rows / size) rows of storage, rank r
 * the rows [r·chunkRows, (r+1)·chunkRows) that exist; the rest of its chunk is zero padding, so that
 * every rank's block of an all-gather has one size. Trailing ranks of a short dim 0 hold no rows.
 * A 0-d parameter counts as one row of one element.
 */
export class ShardLayout {
  /** The parameter's dim 0 (1 for a 0-d parameter). */
  readonly rows: number;
  /** Elements per row (the product of the other dims). */
  readonly rowNumel: number;
  readonly chunkRows: number;
  /** Elements of every rank's padded chunk. */
  readonly chunkNumel: number;

  constructor(
    readonly shape: readonly number[],
    readonly size: number,
  ) {
    this.rows = shape.length === 0 ? 1 : shape[0];
    this.rowNumel = shape.slice(1).reduce((a, b) => a * b, 1);
    this.chunkRows = Math.ceil(this.rows / size);
    this.chunkNumel = this.chunkRows * this.rowNumel;
  }

  get numel(): number {
    return this.rows * this.rowNumel;
  }

  /** The first global row rank r holds (clamped to `rows` for ranks that hold none). */
  rowStart(r: number): number {
    return Math.min(r * this.chunkRows, this.rows);
  }

  /** How many real (unpadded) rows rank r holds. */
  rowsOf(r: number): number {
    return Math.max(0, Math.min(this.chunkRows, this.rows - r * this.chunkRows));
  }

  /** The shape of rank r's shard parameter: its real rows and the other dims. */
  shardShape(r: number): number[] {
    return [this.rowsOf(r), ...this.shape.slice(1)];
  }

  describe(): string {
    return `${formatShape(this.shape)} in ${this.size} chunks of ${this.chunkRows} row(s)`;
  }
}
