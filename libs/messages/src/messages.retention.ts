import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';

/**
 * Messages, RETENTION_MESSAGES_DAYS after they were accepted, by whole partitions of their id
 * (time-ordered), once none of a partition's messages is still queued or processing; with each
 * its event sequence counter, which no event will use again.
 */
@Injectable()
@RetentionSource()
export class MessagesRetentionSource implements RetentionSource {
  readonly name = 'messages';
  readonly partitioned: PartitionedHistory = {
    table: 'messages',
    column: 'id',
    key: 'message-id',
    openRows: `status IN ('queued', 'processing')`,
    beforeDrop: (partition) => `DELETE FROM event_sequences s USING ${partition} m
      WHERE s.account_id = m.account_id AND s.resource_type = 'message' AND s.resource_id = m.id`,
  };

  keepDays(config: AppConfig): number {
    return config.retention.messagesDays;
  }
}
