import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { REDIS, RedisClient, redisServes } from '@app/redis';
import { preparedQuery, sql } from '@app/database';
import { within } from '@app/jobs';

export type Dependency = 'postgres' | 'redis';

export interface Readiness {
  ready: boolean;
  /** `degraded`: ready, but a dependency it can do without is down. */
  status: 'ok' | 'degraded' | 'unavailable';
  checks: Record<Dependency, 'up' | 'down'>;
}

const TIMEOUT_MS = 1_000;

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

const scraped: { service?: ReadinessService } = {};

const dependencyUp = new Gauge({
  name: 'petstore_dependency_up',
  help: '1 when this process reaches the dependency (checked at each scrape and readiness probe), else 0',
  labelNames: ['dependency'] as const,
  async collect() {
    await scraped.service?.dependencies();
  },
});

// Each app names the dependencies it cannot serve without; the others only make it degraded.
@Injectable()
export class ReadinessService implements OnModuleDestroy {
  private recent?: { startedAt: number; settled: boolean; checks: Promise<Readiness['checks']> };

  constructor(
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {
    scraped.service = this;
  }

  async dependencies(): Promise<Readiness['checks']> {
    const [pg, rd] = await Promise.allSettled([
      within(preparedQuery(this.dataSource, sql`SELECT 1`), TIMEOUT_MS),
      within(redisServes(this.redis), TIMEOUT_MS),
    ]);
    const checks = {
      postgres: pg.status === 'fulfilled' ? 'up' : 'down',
      // A cluster that cannot serve every slot is down: some accounts' keys are unreachable.
      redis: rd.status === 'fulfilled' && rd.value ? 'up' : 'down',
    } as const;
    for (const [dependency, state] of Object.entries(checks)) dependencyUp.set({ dependency }, state === 'up' ? 1 : 0);
    return checks;
  }

  async check(required: readonly Dependency[]): Promise<Readiness> {
    return verdict(required, await this.dependencies());
  }

  /** Probes from every kubelet and load balancer cost Postgres at most one query per `maxAgeMs`. */
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
