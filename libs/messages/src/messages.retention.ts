import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';

/** With each message goes its event sequence counter, which no event will use again. */
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
