import { AppConfig } from '@app/config';
import { sql } from '@app/database';
import { RetentionSource, retentionSource } from './retention-source';

describe('retentionSource', () => {
  const Source = retentionSource({
    name: 'usage_hours',
    keepDays: (config) => config.retention.usageHoursDays,
    remove: ({ olderThanDays }) =>
      sql`SELECT ${olderThanDays}::int AS removed`.returns<{ removed: number }>({ removed: true }),
  });

  it('makes a provider the retention job discovers', () => {
    expect(Reflect.hasMetadata(RetentionSource.KEY, Source)).toBe(true);
  });

  it('names the class after the source', () => {
    expect(Source.name).toBe('UsageHoursRetentionSource');
  });

  it('gives each instance the declared fields', () => {
    const source = new Source();
    expect(source.name).toBe('usage_hours');
    expect(source.remove?.({ olderThanDays: 7, limit: 100 }).values).toEqual([7]);
    expect(source.keepDays({ retention: { usageHoursDays: 30 } } as AppConfig)).toBe(30);
  });
});
