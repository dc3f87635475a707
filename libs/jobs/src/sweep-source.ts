import { DiscoveryService } from '@nestjs/core';
import { StagedJob } from './job-definition';

/** An open record the sweep found due: `attempts` for the sources whose job id counts them. */
export interface DueRow {
  id: number | string;
  accountId: number;
  attempts?: number;
  /** The trace the record was created in: the re-enqueued job continues it. */
  traceparent: string | null;
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
   * Rows still open although their work was due more than one sweep interval ago: $1 is that
   * interval in milliseconds, $2 the batch size. Selects id, "accountId", traceparent (and attempts).
   */
  readonly dueSql: string;
  job(row: DueRow): StagedJob;
}

export const LostJobSource = DiscoveryService.createDecorator<void>();
