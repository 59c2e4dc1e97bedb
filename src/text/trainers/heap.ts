/** A binary max-heap under a comparator (positive when a ranks above b). */
export class MaxHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly above: (a: T, b: T) => boolean) {}
  get size(): number {
    return this.items.length;
  }
  push(x: T): void {
    const h = this.items;
    h.push(x);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.above(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }
  pop(): T | undefined {
    const h = this.items;
    if (h.length === 0) return undefined;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.above(h[l], h[m])) m = l;
        if (r < h.length && this.above(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}
