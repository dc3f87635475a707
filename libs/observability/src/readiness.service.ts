import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { REDIS, RedisClient, redisServes } from '@app/redis';
import { preparedQuery } from '@app/database';
import { within } from './within';

export type Dependency = 'postgres' | 'redis';

export interface Readiness {
  /** Every dependency the app cannot serve without is up. */
  ready: boolean;
  /** `degraded`: ready, but a dependency it can do without is down. */
  status: 'ok' | 'degraded' | 'unavailable';
  checks: Record<Dependency, 'up' | 'down'>;
}

const TIMEOUT_MS = 1_000;

/** The dependencies down, as the `details` of a 503 body. */
export function unreachable(r: Readiness): { field: Dependency; message: string }[] {
  return (Object.keys(r.checks) as Dependency[])
    .filter((d) => r.checks[d] === 'down')
    .map((field) => ({ field, message: 'unreachable' }));
}

function verdict(required: readonly Dependency[], checks: Readiness['checks']): Readiness {
  const ready = required.every((d) => checks[d] === 'up');
  const status = !ready ? 'unavailable' : Object.values(checks).includes('down') ? 'degraded' : 'ok';
  return { ready, status, checks };
}

/** The service each scrape asks: the last one built (one per process outside the tests). */
const scraped: { service?: ReadinessService } = {};

const dependencyUp = new Gauge({
  name: 'petstore_dependency_up',
  help: '1 when this process reaches the dependency (checked at each scrape and readiness probe), else 0',
  labelNames: ['dependency'] as const,
  async collect() {
    await scraped.service?.dependencies();
  },
});

/**
 * Can this process reach Postgres and Redis right now? Each app says which of them it cannot
 * serve without (docs/operations.md, "Health checks"); the others only make it degraded.
 */
@Injectable()
export class ReadinessService implements OnModuleDestroy {
  /** The last check, by when it started; shared by every caller until it is settled and too old. */
  private recent?: { startedAt: number; settled: boolean; checks: Promise<Readiness['checks']> };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {
    scraped.service = this;
  }

  /** Pings both (1 s each, in parallel) and updates petstore_dependency_up. */
  async dependencies(): Promise<Readiness['checks']> {
    const [pg, rd] = await Promise.allSettled([
      within(preparedQuery(this.dataSource, 'SELECT 1', []), TIMEOUT_MS),
      within(redisServes(this.redis), TIMEOUT_MS),
    ]);
    const checks = {
      postgres: pg.status === 'fulfilled' ? 'up' : 'down',
      // A cluster that cannot serve every slot is down: some accounts' and queues' keys are unreachable.
      redis: rd.status === 'fulfilled' && rd.value ? 'up' : 'down',
    } as const;
    for (const [dependency, state] of Object.entries(checks)) dependencyUp.set({ dependency }, state === 'up' ? 1 : 0);
    return checks;
  }

  /** Ready when every dependency in `required` is up. */
  async check(required: readonly Dependency[]): Promise<Readiness> {
    return verdict(required, await this.dependencies());
  }

  /**
   * As check(), from a check started at most `maxAgeMs` ago, or the one in flight: probes from
   * every kubelet and load balancer, however many at once, cost Postgres one query a second.
   */
  async recentCheck(required: readonly Dependency[], maxAgeMs = 1_000): Promise<Readiness> {
    const now = performance.now();
    if (!this.recent || (this.recent.settled && now - this.recent.startedAt >= maxAgeMs)) {
      const recent = { startedAt: now, settled: false, checks: this.dependencies() };
      // dependencies() never rejects: every failure is a dependency `down`.
      void recent.checks.then(() => (recent.settled = true));
      this.recent = recent;
    }
    return verdict(required, await this.recent.checks);
  }

  onModuleDestroy(): void {
    if (scraped.service === this) scraped.service = undefined;
  }
}
