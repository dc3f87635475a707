import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions, PoolRole } from './data-source-options';
import { preparedQuery } from './prepared-query';
import { sql } from './sql';

export const POOL_ROLE = Symbol('POOL_ROLE');

const POLL_MS = 250;

// 0 once all it received is replayed, else the last replayed transaction's age: an idle primary's first write after
// a pause counts as lag at once (the safe side). Null: not a replica.
const LAG_SQL = sql`SELECT CASE WHEN NOT pg_is_in_recovery() THEN NULL
                             WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                             ELSE (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::int END AS "lagMs"`;

const lagGauge = new Gauge({
  name: 'petstore_db_replica_lag_seconds',
  help: 'Replay lag of each read replica (DATABASE_REPLICA_URLS, by position); -1 while it cannot be reached or is not a replica',
  labelNames: ['replica'] as const,
});
const staleReads = new Counter({
  name: 'petstore_db_stale_reads_total',
  help: 'Reads that may be slightly stale, by where they went (replica, or primary when no replica was within DATABASE_REPLICA_MAX_LAG_MS)',
  labelNames: ['target'] as const,
});

type ReplicaState = 'usable' | 'lagging' | 'unreachable' | 'not a replica';

interface Replica {
  label: string;
  source: DataSource;
  /** Only `usable` (within the lag budget) takes reads. */
  state: ReplicaState;
}

// Only reads that may be slightly stale; a client's read right after its own write stays on the primary
// (docs/operations-at-scale.md, "Read replicas").
@Injectable()
export class ReadReplicas implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ReadReplicas.name);
  private replicas: Replica[] = [];
  private next = 0;
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;

  constructor(
    private readonly primary: DataSource,
    private readonly config: AppConfig,
    @Inject(POOL_ROLE) private readonly role: PoolRole,
  ) {}

  onApplicationBootstrap(): void {
    // Only the API serves such reads: a worker or the CLI opens no replica pool.
    if (this.role !== 'api') return;
    this.replicas = this.config.databaseReplicaUrls.map((url, i) => ({
      label: String(i),
      source: new DataSource(dataSourceOptions(this.config, 'api', url)),
      state: 'unreachable',
    }));
    if (!this.replicas.length) return;
    this.timer = setInterval(() => (this.polling ??= this.poll().finally(() => (this.polling = undefined))), POLL_MS);
    this.timer.unref();
    this.polling = this.poll().finally(() => (this.polling = undefined));
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
    await Promise.all(this.replicas.filter((r) => r.source.isInitialized).map((r) => r.source.destroy()));
  }

  forStaleRead(): DataSource {
    for (let i = 0; i < this.replicas.length; i++) {
      const replica = this.replicas[(this.next + i) % this.replicas.length];
      if (replica.state !== 'usable') continue;
      this.next = (this.next + i + 1) % this.replicas.length;
      staleReads.inc({ target: 'replica' });
      return replica.source;
    }
    staleReads.inc({ target: 'primary' });
    return this.primary;
  }

  private async poll(): Promise<void> {
    await Promise.all(
      this.replicas.map(async (replica) => {
        let state: ReplicaState;
        let lagMs: number | null = null;
        try {
          if (!replica.source.isInitialized) await replica.source.initialize();
          [{ lagMs }] = await preparedQuery<{ lagMs: number | null }>(replica.source, LAG_SQL);
          state =
            lagMs === null ? 'not a replica' : lagMs <= this.config.databaseReplicaMaxLagMs ? 'usable' : 'lagging';
        } catch {
          state = 'unreachable';
        }
        lagGauge.set({ replica: replica.label }, lagMs === null ? -1 : lagMs / 1000);
        // One line per change: a replica that stays away fails every poll alike.
        if (state !== replica.state) {
          const line = { replica: replica.label, state, lagMs };
          if (state === 'usable') this.logger.log(line, 'read replica in use');
          else this.logger.warn(line, 'read replica left out: its reads go to the primary');
        }
        replica.state = state;
      }),
    );
  }
}
