import type { UsageCounts } from './usage-minute.entity';

export type UsageGranularity = 'minute' | 'hour' | 'day';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const GRANULARITY_MS: Record<UsageGranularity, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: 86_400_000 };

/** Epoch multiples: UTC days and hours have fixed length. */
export const bucketStart = (ms: number, granularity: UsageGranularity) =>
  Math.floor(ms / GRANULARITY_MS[granularity]) * GRANULARITY_MS[granularity];

/** Counts of one usage hash (usage-counters.ts in @app/access), per key id: the counters of a usage row. */
export type KeyCounts = Pick<UsageCounts, 'admitted' | 'refused' | 'bans'>;

/** `{ '<keyId>:a': '3', ... }` as Redis answers HGETALL, by key id. */
export function countsByKey(hash: Record<string, string>): Map<number, KeyCounts> {
  const byKey = new Map<number, KeyCounts>();
  for (const [field, value] of Object.entries(hash)) {
    const [keyId, kind] = field.split(':');
    const counts = byKey.get(Number(keyId)) ?? { admitted: 0, refused: 0, bans: 0 };
    const n = Number(value);
    if (kind === 'a') counts.admitted += n;
    else if (kind === 'r') counts.refused += n;
    else if (kind === 'b') counts.bans += n;
    byKey.set(Number(keyId), counts);
  }
  return byKey;
}
