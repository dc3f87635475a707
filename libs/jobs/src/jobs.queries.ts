import { columns, FOUND, raw, Sql, sql } from '@app/database';
import type { StagedJob } from './job-definition';
import type { OutboxEntity } from './outbox.entity';
import type { RemoveBatch } from './retention-source';

// Every statement of the jobs library: the outbox's (staging, dispatch, relay, the sweep's check) and retention's.

export type OutboxRow = Pick<OutboxEntity, 'id' | 'queue' | 'jobName' | 'jobId' | 'payload' | 'runAt' | 'traceparent'>;

const OUTBOX_COLUMNS = 'id, queue, job_name AS "jobName", job_id AS "jobId", payload, run_at AS "runAt", traceparent';
const OUTBOX_ROW = columns<OutboxRow>({
  id: true,
  queue: true,
  jobName: true,
  jobId: true,
  payload: true,
  runAt: true,
  traceparent: true,
});

// Parameters numbered after `offset` others. One job (most units) as plain parameters; more as one JSON text of the
// staged jobs (one JSON.stringify, not an escaped array literal per column), the same text for two jobs or five
// hundred. Only the ids come back: the dispatcher's rows are the staged jobs.
const outboxInsertText = (offset: number, jobs: number) => {
  const p = (i: number) => `$${offset + i}`;
  const rows =
    jobs === 1
      ? `VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}::jsonb, ${p(5)}::timestamptz, ${p(6)})`
      : `SELECT queue, name, "jobId", payload, "runAt", traceparent FROM json_to_recordset(${p(1)}::json)
            AS j(queue text, name text, "jobId" text, payload jsonb, "runAt" timestamptz, traceparent text)`;
  return `INSERT INTO outbox (queue, job_name, job_id, payload, run_at, traceparent)
          ${rows}
          RETURNING id`;
};

const outboxValues = (jobs: readonly StagedJob[]): unknown[] => {
  if (jobs.length !== 1) return [JSON.stringify(jobs)];
  const [j] = jobs;
  return [j.queue, j.name, j.jobId, JSON.stringify(j.payload), j.runAt ?? null, j.traceparent ?? null];
};

// Texts are fixed (preparedQuery's rule), so their only `$<digits>` are placeholders.
const renumbered = (text: string, offset: number) =>
  offset ? text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`) : text;

/** By the writes' texts and one job or not: a unit's statement is built once per shape, and named at once. */
const insertAfterTexts = [new Map<string, string>(), new Map<string, string>()];

function insertAfterText(writes: readonly Sql[], jobs: number): string {
  const byWrites = insertAfterTexts[jobs === 1 ? 1 : 0];
  const key = writes.length === 1 ? writes[0].text : writes.map((w) => w.text).join('\u0000');
  let text = byWrites.get(key);
  if (text === undefined) {
    const ctes: string[] = [];
    let offset = 0;
    for (const w of writes) {
      ctes.push(`written_${ctes.length} AS (${renumbered(w.text, offset)})`);
      offset += w.values.length;
    }
    const insert = outboxInsertText(offset, jobs);
    byWrites.set(key, (text = ctes.length ? `WITH ${ctes.join(', ')} ${insert}` : insert));
  }
  return text;
}

export const outboxQueries = {
  /**
   * The unit of work's deferred writes, then the jobs' rows, as one statement: in autocommit it is atomic by itself,
   * one round trip instead of four (BEGIN, statement, outbox INSERT, COMMIT). A data-modifying WITH runs exactly once.
   */
  insertAfter: (writes: readonly Sql[], jobs: readonly StagedJob[]) => {
    const values: unknown[] = [];
    for (const w of writes) for (const v of w.values) values.push(v);
    for (const v of outboxValues(jobs)) values.push(v);
    return new Sql([insertAfterText(writes, jobs.length)], values).returns<{ id: number }>({ id: true });
  },
  /** Rows older than the grace, claimed (SKIP LOCKED) so relays on other workers take others. */
  claimForRelay: (graceMs: number, limit: number) =>
    sql`SELECT ${raw(OUTBOX_COLUMNS)} FROM outbox
         WHERE created_at < now() - make_interval(secs => ${graceMs}::double precision / 1000)
         ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`.returns(OUTBOX_ROW),
  delete: (ids: readonly number[]) => sql`DELETE FROM outbox WHERE id = ANY(${ids}::bigint[])`,
  stagedJobIds: (jobIds: readonly string[]) =>
    sql`SELECT job_id AS "jobId" FROM outbox WHERE job_id = ANY(${jobIds}::text[])`.returns<Pick<OutboxRow, 'jobId'>>({
      jobId: true,
    }),
  /** On its created_at index: the table is kept small (rows are deleted once enqueued). */
  backlog: () =>
    sql`SELECT count(*)::int AS waiting,
              coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age
         FROM outbox`.returns<{ waiting: number; age: number }>({ waiting: true, age: true }),
};

/** For the generated .sql file: after a one-parameter statement, which numbers the outbox's parameters from $2. */
export const outboxQueriesSamples: { [K in keyof typeof outboxQueries]?: Parameters<(typeof outboxQueries)[K]> } = {
  insertAfter: [[sql`SELECT ${1}`], []],
};

export const retentionQueries = {
  // SKIP LOCKED keeps a batch short and waiting for nobody; rows go to the DELETE as an array of addresses, since
  // with `IN (...)` the planner may hash-join the whole table. `alsoWhere` is over alias `r`.
  batchRemove: (table: string, ageColumn: string, { olderThanDays, limit }: RemoveBatch, alsoWhere = raw('true')) => {
    const [t, age] = [raw(table), raw(ageColumn)];
    return sql`WITH gone AS (
      DELETE FROM ${t} WHERE ctid = ANY(ARRAY(
        SELECT r.ctid FROM ${t} r
         WHERE r.${age} < now() - make_interval(secs => ${olderThanDays}::double precision * 86400) AND ${alsoWhere}
         ORDER BY r.${age} LIMIT ${limit} FOR UPDATE OF r SKIP LOCKED))
      RETURNING 1)
    SELECT count(*)::int AS removed FROM gone`.returns<{ removed: number }>({ removed: true });
  },
  /** Any row of the partition created at `sinceMs` or later: the table's BRIN index on created_at reads only its tail. */
  youngRow: (partition: string, sinceMs: number) =>
    sql`SELECT 1 AS found FROM ${raw(partition)} WHERE created_at >= to_timestamp(${sinceMs}::double precision / 1000) LIMIT 1`.returns(
      FOUND,
    ),
  /** `openRows` is the source's condition (PartitionedHistory.openRows). */
  openRow: (partition: string, openRows: string) =>
    sql`SELECT 1 AS found FROM ${raw(partition)} WHERE ${raw(openRows)} LIMIT 1`.returns(FOUND),
};

/** For the generated .sql file (and the SQL spec, which prepares it): a source's table, as the placeholder cannot name it. */
export const retentionQueriesSamples: {
  [K in keyof typeof retentionQueries]?: Parameters<(typeof retentionQueries)[K]>;
} = {
  batchRemove: ['usage_hours', 'hour', { olderThanDays: 1, limit: 1 }],
  youngRow: ['messages', 1],
  openRow: ['messages', "status = 'queued'"],
};
