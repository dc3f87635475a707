// Slots of one array, freed in place, not a Set: a Set's adds and deletes rehash its table every few requests, and a
// table V8 has moved to the old generation still holds the responses it had when replaced, keeping each one's whole
// request alive through every scavenge until the next full collection (docs/internals/decisions/0053-in-flight-responses-in-slots.md).
export class InFlightResponses<T extends object> implements Iterable<T> {
  private readonly slots: (T | undefined)[] = [];
  private readonly free: number[] = [];
  private count = 0;

  /** The slot to hand to `remove`. */
  add(item: T): number {
    const slot = this.free.length ? this.free.pop()! : this.slots.length;
    this.slots[slot] = item;
    this.count++;
    return slot;
  }

  /** Once per `add`; a slot given to another item since is left alone. */
  remove(slot: number, item: T): void {
    if (this.slots[slot] !== item) return;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
  }

  get size(): number {
    return this.count;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (const item of this.slots) if (item !== undefined) yield item;
  }
}
