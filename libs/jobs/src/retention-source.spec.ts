import { AppConfig } from '@app/config';
import { RetentionSource, retentionSource } from './retention-source';

describe('retentionSource', () => {
  const Source = retentionSource({
    name: 'usage_hours',
    keepDays: (config) => config.retention.usageHoursDays,
    removeSql: 'SELECT 0 AS removed',
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
    expect(source.removeSql).toBe('SELECT 0 AS removed');
    expect(source.keepDays({ retention: { usageHoursDays: 30 } } as AppConfig)).toBe(30);
  });
});
