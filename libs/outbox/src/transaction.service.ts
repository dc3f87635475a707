import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '@app/database';
import { JobName, JobPayloads, StagedJob, jobIds } from '@app/queues';
import { NewDomainEvent } from './domain-event-types';
import { OutboxService } from './outbox.service';

/** What a unit of work can do besides SQL: stage jobs and record domain events, atomically. */
export interface Tx {
  manager: EntityManager;
  enqueue<J extends JobName>(name: J, payload: JobPayloads[J], jobId: string, runAt?: Date | null): void;
  emit(event: NewDomainEvent): Promise<void>;
}

/**
 * Runs a unit of work in one Postgres transaction. Jobs it stages and the events it emits
 * commit (or roll back) with its rows; staged jobs are dispatched to BullMQ after commit.
 * This is the one place that records domain events: features call tx.emit().
 */
@Injectable()
export class TransactionService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
  ) {}

  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const jobs: StagedJob[] = [];
    let rows: Awaited<ReturnType<OutboxService['stage']>> = [];
    const result = await this.dataSource.transaction(async (manager) => {
      const tx: Tx = {
        manager,
        enqueue: (name, payload, jobId, runAt) => {
          jobs.push({ name, payload, jobId, runAt } as StagedJob);
        },
        emit: async (event) => {
          const [row] = await preparedQuery<{ id: number }>(
            manager,
            // The counter upsert row-locks (account, resource): concurrent emitters take 1, 2, ... in turn.
            `WITH seq AS (
               INSERT INTO event_sequences AS s (account_id, resource_type, resource_id, last)
               VALUES ($1, $3, $4, 1)
               ON CONFLICT (account_id, resource_type, resource_id) DO UPDATE SET last = s.last + 1
               RETURNING last)
             INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out)
             SELECT $1, $2, $3, $4, seq.last, $5::jsonb, false FROM seq
             RETURNING id`,
            [event.accountId, event.type, event.resourceType, String(event.resourceId), JSON.stringify(event.data)],
          );
          jobs.push({
            name: JobName.FanOutEvent,
            payload: { accountId: event.accountId, eventId: row.id },
            jobId: jobIds.fanOut(row.id),
          });
        },
      };
      const value = await work(tx);
      rows = await this.outbox.stage(manager, jobs);
      return value;
    });
    await this.outbox.dispatch(rows);
    return result;
  }

  /**
   * run() for a unit of work that is one SQL statement plus its jobs (no reads, no events):
   * both commit as a single statement, one round trip to Postgres. For the hottest writes.
   */
  async runStatement(statement: string, params: unknown[], jobs: StagedJob[]): Promise<void> {
    await this.outbox.dispatch(await this.outbox.stageWith(statement, params, jobs));
  }
}
