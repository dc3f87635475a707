import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey, KEY_PATTERN } from './api-key-format';

describe('API key format', () => {
  it('generates distinct keys that pass their own checksum', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const k of keys) {
      expect(k).toMatch(KEY_PATTERN);
      expect(isWellFormedApiKey(k)).toBe(true);
    }
  });

  it('refuses a key with one character changed (checksum)', () => {
    const key = generateApiKey();
    const i = 10;
    const swapped = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
    expect(isWellFormedApiKey(swapped)).toBe(false);
  });

  it('refuses other shapes', () => {
    for (const bad of ['', 'pst_', 'sk_live_abc', `${generateApiKey()}x`, generateApiKey().replace('pst_', 'psk_')]) {
      expect(isWellFormedApiKey(bad)).toBe(false);
    }
  });

  it('hashes with SHA-256 and shows only a short prefix', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(displayPrefix(key)).toHaveLength(10);
    expect(key.startsWith(displayPrefix(key))).toBe(true);
  });
});
