// LRU that also caps each account's entries: one tenant's many keys cannot push another's out.
export class KeyCache<V extends { accountId: number }> {
  private readonly entries = new Map<string, V>();
  private readonly byAccount = new Map<number, Set<string>>();

  constructor(
    private readonly maxEntries: number,
    private readonly maxPerAccount: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Marks the entry most recently used. */
  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    const own = this.byAccount.get(value.accountId)!;
    own.delete(key);
    own.add(key);
    return value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    const own = this.byAccount.get(value.accountId) ?? new Set<string>();
    if (own.size >= this.maxPerAccount) this.delete(own.values().next().value as string);
    if (this.entries.size >= this.maxEntries) this.delete(this.entries.keys().next().value as string);
    this.entries.set(key, value);
    this.byAccount.set(value.accountId, own.add(key));
  }

  delete(key: string): void {
    const value = this.entries.get(key);
    if (value === undefined) return;
    this.entries.delete(key);
    const own = this.byAccount.get(value.accountId)!;
    own.delete(key);
    if (!own.size) this.byAccount.delete(value.accountId);
  }

  deleteWhere(drop: (value: V, key: string) => boolean): void {
    for (const [key, value] of this.entries) if (drop(value, key)) this.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.byAccount.clear();
  }
}
