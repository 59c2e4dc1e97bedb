/**
 * A binary max-heap of graph nodes keyed by their `priority`: the engine's ready queue.
 *
 * The key is read from the item, not through a key function handed in by the caller: a closure made
 * per backward pass is garbage that optimized code gets tied to. And the engine reuses its heaps
 * (takeHeap/returnHeap) rather than making one per pass: the hidden classes an instance goes through
 * as its fields are set are kept alive only by live instances, so when a full collection found no
 * heap alive (between passes), they died, V8 threw away the optimized code that had embedded them
 * (push, pop, size, runBackward: "weak objects") and compiled it again.
 */
export class MaxHeap<T extends { readonly priority: number }> {
  private readonly items: T[] = [];
  private readonly keys: number[] = [];

  /** Empties the heap (after a pass that threw), keeping its arrays. */
  clear(): void {
    this.items.length = 0;
    this.keys.length = 0;
  }

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

/** Heaps not in use; a backward pass run from a hook inside another takes a second one. */
const spare: MaxHeap<never>[] = [new MaxHeap()];

/** An empty heap for one backward pass; hand it back with returnHeap. */
export function takeHeap<T extends { readonly priority: number }>(): MaxHeap<T> {
  return (spare.pop() as MaxHeap<T> | undefined) ?? new MaxHeap<T>();
}

export function returnHeap<T extends { readonly priority: number }>(heap: MaxHeap<T>): void {
  heap.clear();
  spare.push(heap as unknown as MaxHeap<never>);
}
