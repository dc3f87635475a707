import { retentionSource } from '@app/jobs';

/** With each message goes its event sequence counter, which no event will use again. */
export const MessagesRetentionSource = retentionSource({
  name: 'messages',
  keepDays: (config) => config.retention.messagesDays,
  partitioned: {
    table: 'messages',
    column: 'id',
    key: 'message-id',
    openRows: `status IN ('queued', 'processing')`,
    beforeDrop: (partition) => `DELETE FROM event_sequences s USING ${partition} m
      WHERE s.account_id = m.account_id AND s.resource_type = 'message' AND s.resource_id = m.id`,
  },
});
