import { hash } from 'node:crypto';

const BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) over Node's one-shot hash: the pads are made once per key, and each
 * message costs two hash() calls. createHmac() builds an OpenSSL context per call, about 5 times
 * the cost; this runs for every key no cache holds (docs/internals/decisions.md).
 */
export class FastHmacSha256 {
  private readonly inner: Buffer;
  private readonly outer: Buffer;

  constructor(key: Buffer) {
    const k = key.length > BLOCK ? hash('sha256', key, 'buffer') : key;
    this.inner = Buffer.alloc(BLOCK, 0x36);
    this.outer = Buffer.alloc(BLOCK, 0x5c);
    for (let i = 0; i < k.length; i++) {
      this.inner[i] ^= k[i];
      this.outer[i] ^= k[i];
    }
  }

  digest(message: string): Buffer {
    const innerHash = hash('sha256', Buffer.concat([this.inner, Buffer.from(message)]), 'buffer');
    return hash('sha256', Buffer.concat([this.outer, innerHash]), 'buffer');
  }
}
