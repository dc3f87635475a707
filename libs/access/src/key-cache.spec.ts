import { KeyCache } from './key-cache';

const entry = (accountId: number) => ({ accountId });

describe('KeyCache', () => {
  it('forgets the least recently used entry when full, not the oldest inserted', () => {
    const cache = new KeyCache<{ accountId: number }>(2, 10);
    cache.set('a', entry(1));
    cache.set('b', entry(2));
    cache.get('a');
    cache.set('c', entry(3));
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([entry(1), undefined, entry(3)]);
  });

  it("evicts within an account at its cap, leaving other accounts' entries", () => {
    const cache = new KeyCache<{ accountId: number }>(100, 2);
    cache.set('other', entry(2));
    for (const key of ['k1', 'k2', 'k3', 'k4']) cache.set(key, entry(1));
    expect(cache.get('other')).toEqual(entry(2));
    expect([cache.get('k1'), cache.get('k2')]).toEqual([undefined, undefined]);
    expect(cache.size).toBe(3);
  });

  it("forgets an account's least recently used entry at its cap, not its oldest inserted", () => {
    const cache = new KeyCache<{ accountId: number }>(100, 2);
    cache.set('k1', entry(1));
    cache.set('k2', entry(1));
    cache.set('other', entry(2));
    cache.get('k1');
    cache.set('k3', entry(1));
    expect([cache.get('k1'), cache.get('k2'), cache.get('k3'), cache.get('other')]).toEqual([
      entry(1),
      undefined,
      entry(1),
      entry(2),
    ]);
  });

  it('drops what deleteWhere picks', () => {
    const cache = new KeyCache<{ accountId: number }>(100, 10);
    cache.set('a', entry(1));
    cache.set('b', entry(2));
    cache.deleteWhere((v) => v.accountId === 1);
    expect([cache.get('a'), cache.get('b')]).toEqual([undefined, entry(2)]);
  });
});
