import { DiscoveryService } from '@nestjs/core';
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

/** Each feature registers the sources of the tables it owns (@LostJobSource()); the lost-job sweep only runs them. */
export interface SweepSource {
  readonly name: string;
  // Open rows due over $1 ms ago, in due order after the cursor ($3, $4: null first), $2 at most, FOR UPDATE SKIP
  // LOCKED; a partial index on (due time, id) over the open rows serves it, so a pass reads only due rows.
  readonly dueSql: string;
  job(row: DueRow): StagedJob;
}

export const LostJobSource = DiscoveryService.createDecorator<void>();
