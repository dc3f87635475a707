import { DiscoveryService } from '@nestjs/core';
import { StagedJob } from './job-definition';

/** An open record the sweep found due: `attempts` for the sources whose job id counts them. */
export interface DueRow {
  id: number | string;
  accountId: number;
  attempts?: number;
  /** The trace the record was created in: the re-enqueued job continues it. */
  traceparent: string | null;
  /** When its work became due, as Postgres wrote it (text keeps the microseconds): with id, the cursor. */
  dueAt: string;
}

/**
 * Records of one table that must still get their job done, and the job that does it. Each
 * feature registers the sources of the tables it owns (a provider marked @LostJobSource()); the
 * lost-job sweep only runs them.
 */
export interface SweepSource {
  /** The metrics label (petstore_sweep_jobs_requeued_total{source}). */
  readonly name: string;
  /**
   * Rows still open although their work was due more than one sweep interval ago, in the order
   * they became due, after a cursor, locked for the pass (FOR UPDATE SKIP LOCKED: workers
   * sweeping at once split the rows between them). $1 is the interval in milliseconds, $2 the
   * batch size, $3 and $4 the cursor's due time and id (null for the first page). Selects id,
   * "accountId", traceparent, "dueAt" (::text) and attempts where the job id counts them; served
   * by a partial index on (due time, id) over the open rows, so a pass reads only due rows.
   */
  readonly dueSql: string;
  job(row: DueRow): StagedJob;
}

export const LostJobSource = DiscoveryService.createDecorator<void>();
