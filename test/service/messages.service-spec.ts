import { createHash } from 'node:crypto';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { ApiError } from '@app/errors';
import { JobRun } from '@app/jobs';
import {
  MessageProcessingService,
  MessagesModule,
  MessagesService,
  POISON_PREFIX,
  ProcessMessagesJob,
} from '@app/messages';
import { ServiceFactory } from './service.factory';

describe('messages (service tier: MessagesService and MessageProcessingService on Postgres and Redis)', () => {
  let factory: ServiceFactory;
  let db: DataSource;
  let messages: MessagesService;
  let processing: MessageProcessingService;
  let queue: Queue;

  const notFound = expect.objectContaining<Partial<ApiError>>({ code: 'not_found' });
  const row = async (id: string) =>
    (await db.query('SELECT status, attempts, last_error AS "lastError" FROM messages WHERE id = $1', [id]))[0];
  const events = async (id: string, type: string) =>
    (await db.query('SELECT count(*)::int AS n FROM events WHERE resource_id = $1 AND type = $2', [id, type]))[0].n;

  beforeAll(async () => {
    factory = await ServiceFactory.start(MessagesModule);
    db = factory.db;
    messages = factory.get(MessagesService);
    processing = factory.get(MessageProcessingService);
    queue = factory.app.get<Queue>(getQueueToken(ProcessMessagesJob.queue.name));
  });
  afterAll(() => factory?.close());

  describe('accepting', () => {
    it('stores an accepted message as queued with no attempt and answers its id, text and time', async () => {
      const accountId = await factory.account();
      const accepted = await messages.create(accountId, 'hello');
      expect(accepted).toEqual({
        id: expect.any(String),
        message: 'hello',
        status: 'queued',
        createdAt: expect.any(String),
      });
      expect(await row(accepted.id)).toEqual({ status: 'queued', attempts: 0, lastError: null });
      expect(await messages.get(accountId, accepted.id)).toEqual(
        expect.objectContaining({ id: accepted.id, message: 'hello', createdAt: accepted.createdAt, result: null }),
      );
    });

    it("queues a lone message's process job under the message id by the time create returns", async () => {
      const accountId = await factory.account();
      const { id } = await messages.create(accountId, 'to the queue');
      const job = await queue.getJob(id);
      expect(job?.name).toBe(ProcessMessagesJob.name);
      expect(job?.data).toEqual({ batch: id, messages: [{ accountId, id }] });
    });

    it('stores each of many concurrent accepts once, in the one job of its batch that its row names', async () => {
      const accountId = await factory.account();
      const accepted = await Promise.all(Array.from({ length: 30 }, (_, i) => messages.create(accountId, `m${i}`)));
      const ids = accepted.map((m) => m.id);
      expect(new Set(ids).size).toBe(30);
      const rows: { id: string; jobId: string }[] = await db.query(
        'SELECT id, coalesce(job_id, id) AS "jobId" FROM messages WHERE account_id = $1',
        [accountId],
      );
      expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
      const jobs = new Map<string, string[]>();
      for (const jobId of new Set(rows.map((r) => r.jobId))) {
        const job = await queue.getJob(jobId);
        jobs.set(
          jobId,
          (job?.data.messages ?? []).map((m: { id: string }) => m.id),
        );
      }
      // More accepts than statements in flight at once: some shared a batch, and its job.
      expect(jobs.size).toBeLessThan(30);
      expect(rows.every((r) => jobs.get(r.jobId)?.filter((id) => id === r.id).length === 1)).toBe(true);
    });

    it('refuses only the message Postgres cannot store; the others accepted with it are stored', async () => {
      const accountId = await factory.account();
      // More than the statements allowed in flight at once, so the last ones share a batch.
      const texts = [...Array.from({ length: 11 }, (_, i) => `fine ${i}`), 'nul \u0000 byte'];
      const results = await Promise.allSettled(texts.map((t) => messages.create(accountId, t)));
      expect(results.map((r) => r.status)).toEqual([...Array(11).fill('fulfilled'), 'rejected']);
      const [{ n }] = await db.query('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [accountId]);
      expect(n).toBe(11);
    });
  });

  describe('reading', () => {
    let accountId: number;
    let ids: string[];

    beforeAll(async () => {
      accountId = await factory.account();
      // Ids order by time of acceptance (by chance within one millisecond): the list's order is the ids'.
      ids = (await Promise.all(['one', 'two', 'three', 'four'].map((t) => messages.create(accountId, t))))
        .map((m) => m.id)
        .sort();
      await processing.processBatch([{ accountId, messageId: ids[1], finalAttempt: false }]);
    });

    it("answers not_found for another account's message", async () => {
      const other = await factory.account();
      await expect(messages.get(other, ids[0])).rejects.toEqual(notFound);
    });

    it('answers not_found for an unknown id', async () => {
      await expect(messages.get(accountId, 'msg_unknown')).rejects.toEqual(notFound);
    });

    it('lists oldest first, one row more than the limit to announce the next page', async () => {
      const page = await messages.list(accountId, { limit: 2 });
      expect(page.map((m) => m.id)).toEqual(ids.slice(0, 3));
    });

    it('lists the page after a given id', async () => {
      const page = await messages.list(accountId, { limit: 10, after: ids[1] });
      expect(page.map((m) => m.id)).toEqual(ids.slice(2));
    });

    it('lists newest first when asked', async () => {
      const page = await messages.list(accountId, { limit: 10, order: 'newest', after: ids[3] });
      expect(page.map((m) => m.id)).toEqual(ids.slice(0, 3).reverse());
    });

    it('lists only the messages of the requested status', async () => {
      const processed = await messages.list(accountId, { limit: 10, status: 'processed' });
      expect(processed.map((m) => m.id)).toEqual([ids[1]]);
    });

    it("lists none of another account's messages", async () => {
      const other = await factory.account();
      await messages.create(other, 'theirs');
      const page = await messages.list(accountId, { limit: 10 });
      expect(page.map((m) => m.id)).toEqual(ids);
    });
  });

  describe('processing', () => {
    let accountId: number;
    const job = (messageId: string, finalAttempt = false) => ({ accountId, messageId, finalAttempt });
    const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

    beforeAll(async () => {
      accountId = await factory.account();
    });

    it('processes a message: its characters and sha256 as the result, one message.processed event', async () => {
      const { id } = await messages.create(accountId, 'héllo 🐈');
      expect(await processing.processBatch([job(id)])).toEqual([undefined]);
      expect(await messages.get(accountId, id)).toEqual(
        expect.objectContaining({
          status: 'processed',
          attempts: 1,
          result: { characters: 7, sha256: sha256('héllo 🐈') },
          processedAt: expect.any(String),
        }),
      );
      expect(await events(id, 'message.processed')).toBe(1);
    });

    it('processes a message once, with one event, when it is in a batch twice and in a later batch again', async () => {
      const { id } = await messages.create(accountId, 'twice');
      expect(await processing.processBatch([job(id), job(id)])).toEqual([undefined, undefined]);
      expect(await processing.processBatch([job(id)])).toEqual([undefined]);
      expect(await row(id)).toEqual({ status: 'processed', attempts: 1, lastError: null });
      expect(await events(id, 'message.processed')).toBe(1);
    });

    it('puts a rejected message back to queued with its reason, and answers the error, before the last attempt', async () => {
      const { id } = await messages.create(accountId, `${POISON_PREFIX}retry me`);
      const [outcome] = await processing.processBatch([job(id)]);
      expect(outcome).toBeInstanceOf(Error);
      expect(await row(id)).toEqual({ status: 'queued', attempts: 1, lastError: outcome!.message });
      expect(await events(id, 'message.failed')).toBe(0);
    });

    it('fails a rejected message on its last attempt, with its reason and one message.failed event', async () => {
      const { id } = await messages.create(accountId, `${POISON_PREFIX}give up`);
      await processing.processBatch([job(id)]);
      const [outcome] = await processing.processBatch([job(id, true)]);
      expect(outcome).toBeInstanceOf(Error);
      expect(await messages.get(accountId, id)).toEqual(
        expect.objectContaining({
          status: 'failed',
          attempts: 2,
          failureReason: outcome!.message,
          failedAt: expect.any(String),
          result: null,
        }),
      );
      expect(await events(id, 'message.failed')).toBe(1);
    });

    it('answers an error only for the rejected job of a batch and processes the others', async () => {
      const good = await messages.create(accountId, 'good');
      const bad = await messages.create(accountId, `${POISON_PREFIX}bad`);
      const outcomes = await processing.processBatch([job(good.id), job(bad.id)]);
      expect(outcomes).toEqual([undefined, expect.any(Error)]);
      expect((await row(good.id)).status).toBe('processed');
      expect((await row(bad.id)).status).toBe('queued');
    });

    it("fails a batch's job with its rejected message's error once the others are processed; a rerun attempts only that one", async () => {
      const good = await messages.create(accountId, 'good in a batch');
      const bad = await messages.create(accountId, `${POISON_PREFIX}bad in a batch`);
      const payload = { batch: good.id, messages: [good, bad].map(({ id }) => ({ accountId, id })) };
      const run = (finalAttempt: boolean): JobRun => ({
        id: good.id,
        finalAttempt,
        traceparent: null,
        postpone: () => Promise.reject(new Error('not postponed')),
        releaseDeduplication: () => Promise.resolve(),
      });
      await expect(processing.processMessages(payload, run(false))).rejects.toThrow(POISON_PREFIX);
      expect([(await row(good.id)).status, (await row(bad.id)).status]).toEqual(['processed', 'queued']);
      await expect(processing.processMessages(payload, run(true))).rejects.toThrow(POISON_PREFIX);
      expect([await row(good.id), (await row(bad.id)).status]).toEqual([
        { status: 'processed', attempts: 1, lastError: null },
        'failed',
      ]);
      expect([await events(good.id, 'message.processed'), await events(bad.id, 'message.failed')]).toEqual([1, 1]);
    });

    it('does nothing, without an error, for a message that no longer exists', async () => {
      expect(await processing.processBatch([job('msg_gone')])).toEqual([undefined]);
    });
  });
});
