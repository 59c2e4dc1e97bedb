import { DistributedError } from "../../distributed/work.js";
import type { DType, TypedArray } from "../../tensor/dtype.js";
import { itemSize } from "../../tensor/dtype.js";

/** Unit names by index; every rank builds its units in the same order, so an index names the same unit everywhere. */
const names = new Map<number, string>();

export type Phase = "forward" | "backward";

/**
 * The collective-sequence check FSDP runs on every all-gather, at no extra collective: 4 bytes
 * after each rank's block carry which unit it gathers and for which pass. A rank that skipped or
 * reordered a unit then finds another unit's tag in its peers' blocks and names the ranks and
 * units, instead of copying the wrong weights (same sizes) or waiting out a timeout.
 */
export class SequenceTag {
  constructor(
    private readonly index: number,
    private name: string,
  ) {
    names.set(index, name);
  }

  rename(name: string): void {
    this.name = name;
    names.set(this.index, name);
  }

  /** Elements of `dtype` the 4-byte tag takes. */
  static slots(dtype: DType): number {
    return Math.ceil(4 / itemSize(dtype));
  }

  private code(phase: Phase): number {
    return this.index * 2 + (phase === "backward" ? 1 : 0);
  }

  write(data: TypedArray, at: number, phase: Phase): void {
    new DataView(data.buffer, data.byteOffset + at * data.BYTES_PER_ELEMENT, 4).setUint32(0, this.code(phase), true);
  }

  /** Throws when any rank's block carries another unit's (or pass's) tag. */
  check(gathered: TypedArray, stride: number, blockLength: number, size: number, phase: Phase): void {
    const mine = this.code(phase);
    for (let r = 0; r < size; r++) {
      const at = gathered.byteOffset + (r * stride + blockLength) * gathered.BYTES_PER_ELEMENT;
      const theirs = new DataView(gathered.buffer, at, 4).getUint32(0, true);
      if (theirs === mine) continue;
      const unit = names.get(theirs >> 1);
      const what = unit === undefined ? `an unknown unit (tag ${theirs})` : `unit '${unit}' (#${theirs >> 1}) for ${theirs & 1 ? "backward" : "forward"}`;
      throw new DistributedError(
        `FSDP collective sequence broken: this rank all-gathered unit '${this.name}' (#${this.index}) for ${phase}, ` +
          `but shard-group rank ${r} all-gathered ${what} in the same collective. Every rank must run the same units ` +
          "in the same order (the same forward, the same backward); a rank that skips or reorders a unit's forward desynchronises the group.",
      );
    }
  }

  /** A failed gather (timeout, size mismatch) re-raised with the unit it was for. */
  explainFailure(err: Error, phase: Phase): Error {
    return new DistributedError(
      `FSDP: the ${phase} all-gather of unit '${this.name}' (#${this.index}) failed: ${err.message} ` +
        "(every rank must gather the same units in the same order; a rank that skipped or reordered this unit's forward leaves its peers here)",
    );
  }
}
