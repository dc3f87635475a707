import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MessageProcessingService, MessagesModule, MessagesService } from '@app/messages';
import { featureModules, newAccount } from './feature-modules';

describe('messages (service tier: MessageProcessingService on Postgres, no worker runtime)', () => {
  let app: INestApplicationContext;
  let db: DataSource;
  let accountId: number;

  beforeAll(async () => {
    app = await featureModules(MessagesModule);
    db = app.get(DataSource);
    accountId = await newAccount(app);
  });
  afterAll(() => app?.close());

  it('a message in a batch twice, and in a later batch again, is processed once with one event', async () => {
    const { id } = await app.get(MessagesService).create(accountId, 'hello service tier');
    const processing = app.get(MessageProcessingService);
    const job = { messageId: id, finalAttempt: false };
    expect(await processing.processBatch([job, job])).toEqual([undefined, undefined]);
    expect(await processing.processBatch([job])).toEqual([undefined]);

    const [message] = await db.query('SELECT status, attempts FROM messages WHERE id = $1', [id]);
    expect(message).toEqual({ status: 'processed', attempts: 1 });
    const [{ n }] = await db.query(
      `SELECT count(*)::int AS n FROM events WHERE resource_id = $1 AND type = 'message.processed'`,
      [id],
    );
    expect(n).toBe(1);
  });
});
