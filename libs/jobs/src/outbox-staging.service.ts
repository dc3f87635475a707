import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery, Sql } from '@app/database';
import { StagedJob } from './job-definition';
import { outboxQueries, OutboxRow } from './jobs.queries';
import { outboxRow } from './outbox-row';

/** Jobs are written with the unit of work's writes, so they commit or roll back with them; OutboxDispatch follows. */
@Injectable()
export class OutboxStaging {
  async stage(db: DataSource | EntityManager, writes: Sql[], jobs: StagedJob[]): Promise<OutboxRow[]> {
    if (!writes.length && !jobs.length) return [];
    const inserted = await preparedQuery<{ id: number }>(db, outboxQueries.insertAfter(writes, jobs));
    // Each row takes its id in the jobs' order (one nextval per row, in json_to_recordset's order): ids pair up.
    const ids = inserted.map((r) => r.id).sort((a, b) => a - b);
    return jobs.map((job, i) => outboxRow(job, ids[i]));
  }
}
