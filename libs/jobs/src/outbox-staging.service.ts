import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '@app/database';
import { StagedJob } from './job-definition';
import { OUTBOX_COLUMNS, OutboxRow } from './outbox-row';

/** A write nothing in its unit of work reads back: a fixed text with $n placeholders, and its values. */
export interface DeferredWrite {
  text: string;
  values: unknown[];
}

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

// Texts are fixed (preparedQuery's rule), so their only `$<digits>` are placeholders.
const renumbered = (text: string, offset: number) =>
  offset ? text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`) : text;

/** Jobs are written with the unit of work's writes, so they commit or roll back with them; OutboxDispatch follows. */
@Injectable()
export class OutboxStaging {
  /**
   * The writes and the jobs' rows as one statement: in autocommit it is atomic by itself, one round trip instead of
   * four (BEGIN, statement, outbox INSERT, COMMIT). A data-modifying WITH runs exactly once, read or not.
   */
  async stage(db: DataSource | EntityManager, writes: DeferredWrite[], jobs: StagedJob[]): Promise<OutboxRow[]> {
    if (!writes.length && !jobs.length) return [];
    const ctes: string[] = [];
    const params: unknown[] = [];
    for (const w of writes) {
      ctes.push(`written_${ctes.length} AS (${renumbered(w.text, params.length)})`);
      params.push(...w.values);
    }
    const { sql, values } = outboxInsert(jobs, params.length);
    return preparedQuery<OutboxRow>(db, ctes.length ? `WITH ${ctes.join(', ')} ${sql}` : sql, [...params, ...values]);
  }
}
