import { RetentionSource } from '@app/jobs';
import { messageQueries } from './messages.queries';

/** With each message goes its event sequence counter, which no event will use again. */
export const messagesRetention: RetentionSource = {
  name: 'messages',
  keepDays: (config) => config.retention.messagesDays,
  partitioned: {
    table: 'messages',
    column: 'id',
    key: 'message-id',
    openRows: messageQueries.openRows().text,
    beforeDrop: (partition) => messageQueries.dropSequencesOf(partition).text,
  },
};
