import { createHmac, randomBytes } from 'node:crypto';
import { FastHmacSha256 } from './fast-hmac';

describe('FastHmacSha256', () => {
  it.each([16, 32, 64, 65, 100])('equals createHmac for a %i-byte key', (length) => {
    const key = randomBytes(length);
    const hmac = new FastHmacSha256(key);
    for (const message of ['', 'pst_k1abc', 'ü'.repeat(100), randomBytes(200).toString('base64')]) {
      expect(hmac.digest(message).equals(createHmac('sha256', key).update(message).digest())).toBe(true);
    }
  });
});
