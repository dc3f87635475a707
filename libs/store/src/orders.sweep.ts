import { Injectable } from '@nestjs/common';
import { DueRow, LostJobSource, stagedJob, SweepSource } from '@app/jobs';
import { FulfilOrderJob } from './store.jobs';
import { orderQueries } from './store.queries';

/** Open orders one sweep interval past their ship date (or their placing, without one). */
@Injectable()
@LostJobSource()
export class OrdersSweepSource implements SweepSource {
  readonly name = 'orders';
  readonly dueSql = orderQueries.sweepDue().text;

  job(row: DueRow) {
    return stagedJob(
      FulfilOrderJob,
      { accountId: row.accountId, orderId: Number(row.id) },
      { traceparent: row.traceparent },
    );
  }
}
