import { pooledRandomFill, writeHex } from './pooled-random';

// The text is written into one scratch buffer: randomUUID() joins its 36 characters from 20 pieces (about 0.5 KB
// per request; docs/internals/decisions/0051-pooled-random-ids.md).
const random = Buffer.alloc(16);
const text = Buffer.alloc(36);
const DASH = 0x2d;

/** A random (version 4) UUID in lowercase hex, as crypto.randomUUID() gives, from the same CSPRNG. */
export function newRequestId(): string {
  pooledRandomFill(random);
  random[6] = (random[6] & 0x0f) | 0x40;
  random[8] = (random[8] & 0x3f) | 0x80;
  let t = writeHex(text, 0, random, 0, 4);
  text[t++] = DASH;
  t = writeHex(text, t, random, 4, 2);
  text[t++] = DASH;
  t = writeHex(text, t, random, 6, 2);
  text[t++] = DASH;
  t = writeHex(text, t, random, 8, 2);
  text[t++] = DASH;
  writeHex(text, t, random, 10, 6);
  return text.toString('latin1', 0, 36);
}
