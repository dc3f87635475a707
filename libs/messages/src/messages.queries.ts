import { columns, FeedOrder, feedPage, raw, sql } from '@app/database';
import { DUE_COLUMNS, DuePage, DueRow } from '@app/jobs';
import { MessageEntity, MessageStatus } from './message.entity';

/** The columns of a Message, for a messages table aliased `t`. */
export const MESSAGE_COLUMNS = (t: string) =>
  `${t}.id, ${t}.account_id AS "accountId", ${t}.message, ${t}.status, ${t}.attempts, ${t}.characters, ${t}.sha256,
   ${t}.last_error AS "lastError", ${t}.created_at AS "createdAt", ${t}.processed_at AS "processedAt",
   ${t}.failed_at AS "failedAt"`;

/** As MESSAGE_COLUMNS reads it. */
export type Message = Omit<MessageEntity, 'traceparent' | 'jobId'>;
const MESSAGE_ROW = columns<Message>({
  id: true,
  accountId: true,
  message: true,
  status: true,
  attempts: true,
  characters: true,
  sha256: true,
  lastError: true,
  createdAt: true,
  processedAt: true,
  failedAt: true,
});

export interface MessageListFilter {
  limit: number;
  after?: string;
  status?: MessageStatus;
  order?: FeedOrder;
}

/** What `claim` returns of a message. */
export type ClaimedMessage = Pick<Message, 'id' | 'accountId' | 'message'>;

/** A message the lost-job sweep found. */
export type DueMessage = Omit<DueRow, 'attempts'> & { jobId: string };

/** A message's result, for `finish`. */
export interface ProcessedMessage {
  accountId: number;
  id: string;
  characters: number;
  sha256: string;
}

const messageColumns = raw(MESSAGE_COLUMNS('m'));

/**
 * traceparent is taken per message: a batch is written in the context of whichever request flushed it. createdAt is
 * the ISO text the answer carries too (pg would format the Date again).
 */
export type NewMessageRow = Pick<MessageEntity, 'id' | 'accountId' | 'traceparent'> & {
  text: string;
  createdAt: string;
};

export const messageQueries = {
  /**
   * One row (most batches at a steady rate) as plain parameters; more as one JSON text of the rows (one
   * JSON.stringify, where pg formatted and escaped an array literal per column, ~2 KB per row). The rows share the
   * job of the first (ProcessMessagesJob): the others keep its id as their job_id.
   */
  insertBatch: (rows: NewMessageRow[]) => {
    if (rows.length === 1) {
      const [r] = rows;
      return sql`INSERT INTO messages (id, account_id, message, status, attempts, created_at, traceparent)
  VALUES (${r.id}, ${r.accountId}, ${r.text}, 'queued', 0, ${r.createdAt}::timestamptz, ${r.traceparent})`;
    }
    return sql`INSERT INTO messages (id, account_id, message, status, attempts, created_at, traceparent, job_id)
  SELECT id, "accountId", text, 'queued', 0, "createdAt", traceparent, NULLIF(${rows[0].id}, id)
  FROM json_to_recordset(${JSON.stringify(rows)}::json)
    AS m(id text, "accountId" bigint, text text, "createdAt" timestamptz, traceparent text)`;
  },
  get: (accountId: number, id: string) =>
    sql`SELECT ${messageColumns} FROM messages m WHERE m.id = ${id} AND m.account_id = ${accountId}`.returns(
      MESSAGE_ROW,
    ),
  list: (accountId: number, q: MessageListFilter) => {
    const page = feedPage('m', 'account_id', accountId, q.order ?? 'oldest', q.after);
    const byStatus = q.status ? sql`AND m.status = ${q.status}` : raw('');
    return sql`SELECT ${messageColumns} FROM messages m
        WHERE ${page.where} ${byStatus} ${page.orderBy} LIMIT ${q.limit + 1}`.returns(MESSAGE_ROW);
  },
  /**
   * Also processing → processing (an earlier run died before finishing); a finished or gone message is not returned.
   * Only what the processor reads (no timestamps to parse).
   */
  claim: (accountIds: number[], ids: string[]) =>
    sql`UPDATE messages m SET status = 'processing', attempts = m.attempts + 1
    FROM unnest(${accountIds}::bigint[], ${ids}::text[]) AS v(account_id, id)
   WHERE m.account_id = v.account_id AND m.id = v.id AND m.status IN ('queued', 'processing')
   RETURNING m.id, m.account_id AS "accountId", m.message`.returns<ClaimedMessage>({
      id: true,
      accountId: true,
      message: true,
    }),
  /** A message another run finished meanwhile is left alone. */
  finish: (done: ProcessedMessage[]) => {
    const [accountIds, ids] = [done.map((d) => d.accountId), done.map((d) => d.id)];
    const [characters, sha256s] = [done.map((d) => d.characters), done.map((d) => d.sha256)];
    return sql`UPDATE messages m
     SET status = 'processed', characters = v.characters, sha256 = v.sha256, processed_at = now(), last_error = NULL
    FROM unnest(${accountIds}::bigint[], ${ids}::text[], ${characters}::int[], ${sha256s}::text[]) AS v(account_id, id, characters, sha256)
   WHERE m.account_id = v.account_id AND m.id = v.id AND m.status = 'processing'
   RETURNING ${messageColumns}`.returns(MESSAGE_ROW);
  },
  /** Back to queued for a retry, or failed after the last attempt; only while this run still holds it. */
  recordFailure: (accountId: number, id: string, status: 'queued' | 'failed', reason: string) =>
    sql`UPDATE messages m SET status = ${status}, last_error = ${reason}, failed_at = CASE WHEN ${status === 'failed'} THEN now() END
          WHERE m.account_id = ${accountId} AND m.id = ${id} AND m.status = 'processing'
          RETURNING ${messageColumns}`.returns(MESSAGE_ROW),
  /** The lost-job sweep's statement (SweepSource.due); `jobId`: the job that holds the message, its batch's. */
  sweepDue: ({ olderThanMs, limit, after }: DuePage) =>
    sql`SELECT id, account_id AS "accountId", traceparent, created_at::text AS "dueAt",
              coalesce(job_id, id) AS "jobId" FROM messages
       WHERE status IN ('queued', 'processing')
         AND created_at < now() - make_interval(secs => ${olderThanMs}::double precision / 1000)
         AND (created_at, id) > (coalesce(${after?.dueAt ?? null}::timestamptz, '-infinity'), coalesce(${after?.id ?? null}::text, ''))
       ORDER BY created_at, id LIMIT ${limit}
       FOR UPDATE SKIP LOCKED`.returns<DueMessage>({ ...DUE_COLUMNS, jobId: true }),
  /** Retention: rows that keep their partition from being dropped (PartitionedHistory.openRows). */
  openRows: () => raw(`status IN ('queued', 'processing')`),
  /** Retention: with each message goes its event sequence counter, which no event will use again. */
  dropSequencesOf: (partition: string) =>
    raw(`DELETE FROM event_sequences s USING ${partition} m
      WHERE s.account_id = m.account_id AND s.resource_type = 'message' AND s.resource_id = m.id`),
};

/** For the generated .sql file (and the SQL spec, which prepares it): a partition's parent stands for the partition. */
export const messageQueriesSamples: { [K in keyof typeof messageQueries]?: Parameters<(typeof messageQueries)[K]> } = {
  dropSequencesOf: ['messages'],
};
