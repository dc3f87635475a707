import { Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { declaredProvider } from './declared-provider';
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
  /** The job that holds these rows: a row alone, or a page's rows of one `batchOf` (rows whose jobs share an id go once). */
  job(rows: readonly [DueRow, ...DueRow[]]): StagedJob;
  /** Rows of one key are one job carrying them all (a batch's); without it, each row's job is its own. */
  batchOf?(row: DueRow): string;
}

export const LostJobSource = DiscoveryService.createDecorator<void>();

/** A source as data: the provider class the lost-job sweep discovers (`orders`: OrdersSweepSource). */
export function sweepSource<R extends DueRow>(source: {
  name: string;
  dueSql: string;
  job(rows: readonly [R, ...R[]]): StagedJob;
  batchOf?(row: R): string;
}): Type<SweepSource> {
  return declaredProvider(source as SweepSource, LostJobSource(), 'SweepSource');
}
