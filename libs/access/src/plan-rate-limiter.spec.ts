import { Logger } from '@nestjs/common';
import { register } from 'prom-client';
import type { AppConfig } from '@app/config';
import type { RedisClient } from '@app/redis';
import { PlanRateLimiter, RATE_LIMIT_COMMAND } from './plan-rate-limiter';
import { keySubject } from './rate-limit-subject';
import type { UsageIndex } from './usage-counters';

const connectionErrors = async () =>
  (await register.getSingleMetric('petstore_redis_errors_total')!.get()).values.find(
    (v) => v.labels.client === 'petstore' && v.labels.kind === 'connection',
  )?.value ?? 0;

describe('PlanRateLimiter', () => {
  beforeEach(() => jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it("counts a failed batch's one round trip as one Redis error, not one per call", async () => {
    const send = jest.fn().mockRejectedValue(new Error('Connection is closed.'));
    const redis = { [RATE_LIMIT_COMMAND]: send, status: 'ready', options: {} } as unknown as RedisClient;
    const config = { rateLimit: { banStrikes: 10, banSeconds: 900 } } as AppConfig;
    const limiter = new PlanRateLimiter(redis, config, { note: () => undefined } as unknown as UsageIndex);
    const before = await connectionErrors();

    const subject = keySubject(1, 2, 'free');
    const limits = { perMinute: 60, perDay: 1_000 };
    const decisions = await Promise.all(Array.from({ length: 5 }, () => limiter.consume(subject, limits)));

    expect(send).toHaveBeenCalledTimes(1);
    expect(decisions.map((d) => d.fallback)).toEqual([true, true, true, true, true]);
    expect(await connectionErrors()).toBe(before + 1);
  });
});
