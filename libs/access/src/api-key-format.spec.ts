import { randomBytes } from 'node:crypto';
import {
  displayPrefix,
  generateApiKey,
  generateLegacyApiKey,
  hashApiKey,
  hasValidTag,
  KEY_PATTERN,
  KeyTags,
  keyFormat,
} from './api-key-format';

const signer = { id: 'k1', key: randomBytes(32) };
const keys = new KeyTags([signer]);
const changed = (key: string, i: number) => key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);

describe('API key format', () => {
  it('generates distinct tagged keys that pass their own checksum and tag', () => {
    const issued = new Set(Array.from({ length: 200 }, () => generateApiKey(keys)));
    expect(issued.size).toBe(200);
    for (const k of issued) {
      expect(k).toMatch(KEY_PATTERN);
      expect(keyFormat(k)).toBe('tagged');
      expect(hasValidTag(k, keys)).toBe(true);
    }
  });

  it('recognises keys of the format issued before tags', () => {
    expect(keyFormat(generateLegacyApiKey())).toBe('legacy');
  });

  it('refuses a key with one character changed (checksum)', () => {
    expect(keyFormat(changed(generateApiKey(keys), 10))).toBeNull();
    expect(keyFormat(changed(generateLegacyApiKey(), 10))).toBeNull();
  });

  it('refuses a tag made under another key, though the checksum holds', () => {
    const forged = generateApiKey(new KeyTags([{ id: signer.id, key: randomBytes(32) }]));
    expect(keyFormat(forged)).toBe('tagged');
    expect(hasValidTag(forged, keys)).toBe(false);
  });

  it('refuses a tag key id that is not configured', () => {
    expect(hasValidTag(generateApiKey(new KeyTags([{ id: 'zz', key: signer.key }])), keys)).toBe(false);
  });

  it('verifies with any listed key, so the signing key can rotate', () => {
    const next = { id: 'k2', key: randomBytes(32) };
    const both = new KeyTags([next, signer]);
    expect(hasValidTag(generateApiKey(keys), both)).toBe(true);
    expect(hasValidTag(generateApiKey(both), both)).toBe(true);
  });

  it('refuses other shapes', () => {
    const key = generateApiKey(keys);
    for (const bad of ['', 'pst_', 'sk_live_abc', `${key}x`, key.replace('pst_', 'psk_')]) {
      expect(keyFormat(bad)).toBeNull();
    }
  });

  it('hashes with SHA-256 and shows only a short prefix', () => {
    const key = generateApiKey(keys);
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(displayPrefix(key)).toHaveLength(10);
    expect(key.startsWith(displayPrefix(key))).toBe(true);
  });
});
