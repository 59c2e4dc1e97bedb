/**
 * A binary max-heap of graph nodes keyed by their `priority`: the engine's ready queue.
 *
 * The key is read from the item, not through a key function handed in by the caller: a closure made
 * for each backward pass was a new function object each time, and the optimized code of push/pop
 * (and of runBackward, which inlines them) embedded the one it had seen; when that closure died at a
 * full collection V8 threw the code away ("weak objects") and compiled it again, every few dozen steps.
 */
export class MaxHeap<T extends { readonly priority: number }> {
  private readonly items: T[] = [];
  private readonly keys: number[] = [];

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const items = this.items;
    const keys = this.keys;
    const key = item.priority;
    let i = items.length;
    items.push(item);
    keys.push(key);
    // Sift up: move parents down until the new key's place is found.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (keys[parent]! >= key) break;
      items[i] = items[parent]!;
      keys[i] = keys[parent]!;
      i = parent;
    }
    items[i] = item;
    keys[i] = key;
  }

  pop(): T | undefined {
    const items = this.items;
    const keys = this.keys;
    if (items.length === 0) return undefined;
    const top = items[0];
    const lastItem = items.pop()!;
    const lastKey = keys.pop()!;
    const n = items.length;
    if (n > 0) {
      // Sift down the last item from the root.
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const child = r < n && keys[r]! > keys[l]! ? r : l;
        if (keys[child]! <= lastKey) break;
        items[i] = items[child]!;
        keys[i] = keys[child]!;
        i = child;
      }
      items[i] = lastItem;
      keys[i] = lastKey;
    }
    return top;
  }
}
