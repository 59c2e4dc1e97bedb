/** A binary max-heap keyed by a number: the engine's ready queue. */
export class MaxHeap<T> {
  private items: T[] = [];
  private keys: number[] = [];

  constructor(private readonly key: (item: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const items = this.items;
    const keys = this.keys;
    items.push(item);
    keys.push(this.key(item));
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (keys[parent] >= keys[i]) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    if (items.length === 0) return undefined;
    const top = items[0];
    const lastItem = items.pop()!;
    const lastKey = this.keys.pop()!;
    if (items.length > 0) {
      items[0] = lastItem;
      this.keys[0] = lastKey;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < items.length && this.keys[l] > this.keys[best]) best = l;
        if (r < items.length && this.keys[r] > this.keys[best]) best = r;
        if (best === i) break;
        this.swap(i, best);
        i = best;
      }
    }
    return top;
  }

  private swap(i: number, j: number): void {
    [this.items[i], this.items[j]] = [this.items[j], this.items[i]];
    [this.keys[i], this.keys[j]] = [this.keys[j], this.keys[i]];
  }
}
