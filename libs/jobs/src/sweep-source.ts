import { columns, Sql } from '@app/database';
import { StagedJob } from './job-definition';

/** `attempts` for the sources whose job id counts them. */
export interface DueRow {
  id: number | string;
  accountId: number;
  attempts?: number;
  traceparent: string | null;
  /** As text, which keeps the microseconds: with id, the cursor. */
  dueAt: string;
}

/** The columns every source's rows have (`attempts` only some). */
export const DUE_COLUMNS = columns<Omit<DueRow, 'attempts'>>({
  id: true,
  accountId: true,
  traceparent: true,
  dueAt: true,
});

/** One page of a sweep: rows due over `olderThanMs` ago, `limit` at most, after the cursor (null: from the first). */
export interface DuePage {
  olderThanMs: number;
  limit: number;
  after: { dueAt: string; id: string } | null;
}

/** Each feature lists the sources of the tables it owns (WorkerFeature.sweeps); the lost-job sweep only runs them. */
export interface SweepSource {
  readonly name: string;
  // Open rows of the page in due order, FOR UPDATE SKIP LOCKED; a partial index on (due time, id) over the open rows
  // serves it, so a pass reads only due rows.
  due(page: DuePage): Sql<DueRow>;
  /** The job that holds these rows: a row alone, or a page's rows of one `batchOf` (rows whose jobs share an id go once). */
  job(rows: readonly [DueRow, ...DueRow[]]): StagedJob;
  /** Rows of one key are one job carrying them all (a batch's); without it, each row's job is its own. */
  batchOf?(row: DueRow): string;
}

/** A source typed by its own rows (`R`: DueRow's columns and more): the sweep hands `job` the rows `due` returned. */
export function sweepSource<R extends DueRow>(source: {
  name: string;
  due(page: DuePage): Sql<R>;
  job(rows: readonly [R, ...R[]]): StagedJob;
  batchOf?(row: R): string;
}): SweepSource {
  return source as unknown as SweepSource;
}
