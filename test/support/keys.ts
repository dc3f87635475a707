import { randomBytes } from 'node:crypto';
import { generateApiKey, generateLegacyApiKey, KeyTags } from '@app/access';
import { DEVELOPMENT_TAG_KEY } from '@app/config';
import type { RunningApi } from './test-apps';

/** A key in the current format with a valid checksum whose tag no server key made. */
export const forgedKey = () => generateApiKey(new KeyTags([{ id: DEVELOPMENT_TAG_KEY.id, key: randomBytes(32) }]));

/** A key in the format issued before tags, valid checksum, never issued. */
export const forgedLegacyKey = generateLegacyApiKey;

/** A key this deployment could have issued (its tag verifies) that no account holds. */
export const unissuedKey = () => generateApiKey(new KeyTags([DEVELOPMENT_TAG_KEY]));

/** The API's counter of key lookups with this answer (`postgres`, `shared`, ...), from its /metrics. */
export async function keyLookups(api: RunningApi, answer: string): Promise<number> {
  const text = await (await fetch(`${api.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`petstore_api_key_lookups_total{answer="${answer}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}
