import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS } from '@app/redis';

export interface Readiness {
  ready: boolean;
  checks: { postgres: 'up' | 'down'; redis: 'up' | 'down' };
}

const TIMEOUT_MS = 1_000;

function within<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Can this process reach Postgres and Redis right now? Used by /health/ready of both apps. */
@Injectable()
export class ReadinessService {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  async check(): Promise<Readiness> {
    const [pg, rd] = await Promise.allSettled([within(this.dataSource.query('SELECT 1')), within(this.redis.ping())]);
    const checks = {
      postgres: pg.status === 'fulfilled' ? 'up' : 'down',
      redis: rd.status === 'fulfilled' ? 'up' : 'down',
    } as const;
    return { ready: checks.postgres === 'up' && checks.redis === 'up', checks };
  }
}
