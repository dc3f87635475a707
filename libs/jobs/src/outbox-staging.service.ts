import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '@app/database';
import { StagedJob } from './job-definition';
import { outboxQueries, OutboxRow } from './jobs.queries';

/** Jobs are written inside the business transaction, so they commit or roll back with it; OutboxDispatch follows. */
@Injectable()
export class OutboxStaging {
  constructor(private readonly dataSource: DataSource) {}

  async stage(manager: EntityManager, jobs: StagedJob[]): Promise<OutboxRow[]> {
    if (!jobs.length) return [];
    return preparedQuery<OutboxRow>(manager, outboxQueries.insert(jobs));
  }

  /** One statement, atomic in autocommit: one round trip instead of four (BEGIN, statement, outbox INSERT, COMMIT). */
  async stageWith(statement: string, params: unknown[], jobs: StagedJob[]): Promise<OutboxRow[]> {
    return preparedQuery<OutboxRow>(this.dataSource, outboxQueries.insertAfter(statement, params, jobs));
  }
}
