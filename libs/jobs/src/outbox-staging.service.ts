import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '@app/database';
import { StagedJob } from './job-definition';
import { OUTBOX_COLUMNS, OutboxRow } from './outbox-row';

// Parameters numbered after `offset` others; one array per column (unnest), so the text and its parameter count
// are the same for one job or five hundred.
function outboxInsert(jobs: StagedJob[], offset: number): { sql: string; values: unknown[] } {
  const values: unknown[][] = [[], [], [], [], [], []];
  for (const j of jobs) {
    [j.queue, j.name, j.jobId, JSON.stringify(j.payload), j.runAt ?? null, j.traceparent ?? null].forEach((v, i) =>
      values[i].push(v),
    );
  }
  const p = (i: number) => `$${offset + i}`;
  return {
    sql: `INSERT INTO outbox (queue, job_name, job_id, payload, run_at, traceparent)
          SELECT * FROM unnest(${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::jsonb[], ${p(5)}::timestamptz[], ${p(6)}::text[])
          RETURNING ${OUTBOX_COLUMNS}`,
    values,
  };
}

/** Jobs are written inside the business transaction, so they commit or roll back with it; OutboxDispatch follows. */
@Injectable()
export class OutboxStaging {
  constructor(private readonly dataSource: DataSource) {}

  async stage(manager: EntityManager, jobs: StagedJob[]): Promise<OutboxRow[]> {
    if (!jobs.length) return [];
    const { sql, values } = outboxInsert(jobs, 0);
    return preparedQuery<OutboxRow>(manager, sql, values);
  }

  /** One statement, atomic in autocommit: one round trip instead of four (BEGIN, statement, outbox INSERT, COMMIT). */
  async stageWith(statement: string, params: unknown[], jobs: StagedJob[]): Promise<OutboxRow[]> {
    const { sql, values } = outboxInsert(jobs, params.length);
    // A data-modifying WITH runs exactly once, whether or not the main statement reads it.
    return preparedQuery<OutboxRow>(this.dataSource, `WITH written AS (${statement}) ${sql}`, [...params, ...values]);
  }
}
