import { randomFillSync } from 'node:crypto';

// CSPRNG bytes filled 4 KB at once, each handed out once: randomBytes() per id made a Buffer and its backing store
// (docs/internals/decisions/0051-pooled-random-ids.md).
const pool = Buffer.alloc(4096);
let used = pool.length;
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** Fills `target` (at most 4 KB) with random bytes from the pool, refilling it first when it runs short. */
export function pooledRandomFill(target: Buffer): Buffer {
  if (target.length > pool.length) throw new RangeError(`at most ${pool.length} random bytes at a time`);
  if (used + target.length > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += pool.copy(target, 0, used, used + target.length);
  return target;
}

/** Writes `count` bytes of `bytes` from `from` as lowercase hex into `text` at `to`; returns where the hex ends. */
export function writeHex(text: Buffer, to: number, bytes: Buffer, from: number, count: number): number {
  for (let i = from; i < from + count; i++) {
    text[to++] = HEX[bytes[i] >> 4];
    text[to++] = HEX[bytes[i] & 15];
  }
  return to;
}
