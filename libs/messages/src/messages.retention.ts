import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { PartitionedHistory, RetentionSource } from '@app/jobs';
import { messageQueries } from './messages.queries';

/** With each message goes its event sequence counter, which no event will use again. */
@Injectable()
@RetentionSource()
export class MessagesRetentionSource implements RetentionSource {
  readonly name = 'messages';
  readonly partitioned: PartitionedHistory = {
    table: 'messages',
    column: 'id',
    key: 'message-id',
    openRows: messageQueries.openRows().text,
    beforeDrop: (partition) => messageQueries.dropSequencesOf(partition).text,
  };

  keepDays(config: AppConfig): number {
    return config.retention.messagesDays;
  }
}
