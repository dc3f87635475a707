interface Node<V> {
  key: string;
  value: V;
  // Least recently used first, in the whole cache and within the account.
  prev?: Node<V>;
  next?: Node<V>;
  accountPrev?: Node<V>;
  accountNext?: Node<V>;
}

interface Chain<V> {
  first?: Node<V>;
  last?: Node<V>;
  size: number;
}

// LRU that also caps each account's entries: one tenant's many keys cannot push another's out.
// Recency is kept in linked nodes: a hit moves pointers, where deleting and re-adding a Map entry
// left a hole that made both Maps rebuild their tables every few hits.
export class KeyCache<V extends { accountId: number }> {
  private readonly entries = new Map<string, Node<V>>();
  private readonly byAccount = new Map<number, Chain<V>>();
  private readonly all: Chain<V> = { size: 0 };

  constructor(
    private readonly maxEntries: number,
    private readonly maxPerAccount: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Marks the entry most recently used. */
  get(key: string): V | undefined {
    const node = this.entries.get(key);
    if (node === undefined) return undefined;
    if (node !== this.all.last) {
      unlink(this.all, node, 'prev', 'next');
      append(this.all, node, 'prev', 'next');
      const own = this.byAccount.get(node.value.accountId)!;
      unlink(own, node, 'accountPrev', 'accountNext');
      append(own, node, 'accountPrev', 'accountNext');
    }
    return node.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    let own = this.byAccount.get(value.accountId);
    if (own === undefined) this.byAccount.set(value.accountId, (own = { size: 0 }));
    if (own.size >= this.maxPerAccount) this.delete(own.first!.key);
    if (this.entries.size >= this.maxEntries) this.delete(this.all.first!.key);
    const node: Node<V> = { key, value };
    this.entries.set(key, node);
    append(this.all, node, 'prev', 'next');
    append(own, node, 'accountPrev', 'accountNext');
  }

  delete(key: string): void {
    const node = this.entries.get(key);
    if (node === undefined) return;
    this.entries.delete(key);
    unlink(this.all, node, 'prev', 'next');
    const own = this.byAccount.get(node.value.accountId)!;
    unlink(own, node, 'accountPrev', 'accountNext');
    if (!own.size) this.byAccount.delete(node.value.accountId);
  }

  deleteWhere(drop: (value: V, key: string) => boolean): void {
    for (const [key, node] of this.entries) if (drop(node.value, key)) this.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.byAccount.clear();
    this.all.first = this.all.last = undefined;
    this.all.size = 0;
  }
}

type Link = 'prev' | 'next' | 'accountPrev' | 'accountNext';

function unlink<V>(chain: Chain<V>, node: Node<V>, prev: Link, next: Link): void {
  const before = node[prev];
  const after = node[next];
  if (before) before[next] = after;
  else chain.first = after;
  if (after) after[prev] = before;
  else chain.last = before;
  node[prev] = node[next] = undefined;
  chain.size--;
}

function append<V>(chain: Chain<V>, node: Node<V>, prev: Link, next: Link): void {
  node[prev] = chain.last;
  if (chain.last) chain.last[next] = node;
  else chain.first = node;
  chain.last = node;
  chain.size++;
}
