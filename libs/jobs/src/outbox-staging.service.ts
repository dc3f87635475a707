import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery, Sql } from '@app/database';
import { StagedJob } from './job-definition';
import { outboxQueries, OutboxRow } from './jobs.queries';

/** Jobs are written with the unit of work's writes, so they commit or roll back with them; OutboxDispatch follows. */
@Injectable()
export class OutboxStaging {
  async stage(db: DataSource | EntityManager, writes: Sql[], jobs: StagedJob[]): Promise<OutboxRow[]> {
    if (!writes.length && !jobs.length) return [];
    return preparedQuery<OutboxRow>(db, outboxQueries.insertAfter(writes, jobs));
  }
}
