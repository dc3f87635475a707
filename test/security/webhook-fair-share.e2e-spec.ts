import { INestApplicationContext } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { DeliverWebhookJob, WebhookQueue } from '@app/webhooks';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../support/test-apps';
import { eventually, HttpClient } from '../support/http';
import { WebhookReceiver } from '@app/testing';

const ENV = { ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WORKER_CONCURRENCY: '10' };
const BACKLOG = 500;
const SLOW_RECEIVER_MS = 2_000;

describe('fair share of webhook deliveries across accounts', () => {
  let api: RunningApi;
  let worker: INestApplicationContext | undefined;
  const receivers: WebhookReceiver[] = [];

  async function subscribed(receiver: WebhookReceiver) {
    receivers.push(await receiver.start());
    const { accountId, apiKey } = await createAccount(api);
    const http = new HttpClient(api.url, apiKey);
    const hook = await http.post('/v1/webhooks', { url: receiver.url, events: ['pet.created'] });
    expect(hook.status).toBe(201);
    return { accountId, http, receiver, webhookId: hook.body.id as number };
  }

  beforeAll(async () => {
    api = await startApi(ENV);
  });
  afterAll(() =>
    closeAll([() => Promise.all(receivers.map((r) => r.close())), () => worker?.close(), () => api?.close()]),
  );

  it("delivers another account's webhook within seconds while one account has 500 deliveries pending to a slow receiver", async () => {
    const slow = new WebhookReceiver();
    slow.replyDelayMs = SLOW_RECEIVER_MS;
    const greedy = await subscribed(slow);
    const other = await subscribed(new WebhookReceiver());

    // The backlog, queued before the worker starts: first in line, as after a burst of events.
    const ids: { id: number }[] = await api.app.get(DataSource).query(
      `INSERT INTO webhook_deliveries (webhook_id, account_id, event_id, event_type)
       SELECT $1, $2, NULL, 'webhook.test' FROM generate_series(1, $3) RETURNING id`,
      [greedy.webhookId, greedy.accountId, BACKLOG],
    );
    const queue = api.app.get<Queue>(getQueueToken(WebhookQueue.name), { strict: false });
    await queue.addBulk(
      ids.map(({ id }) => ({
        name: DeliverWebhookJob.name,
        data: { accountId: greedy.accountId, deliveryId: id, attempt: 0 },
        opts: { jobId: DeliverWebhookJob.jobId({ accountId: greedy.accountId, deliveryId: id, attempt: 0 }) },
      })),
    );
    expect((await other.http.post(`/v1/webhooks/${other.webhookId}/test`)).status).toBe(202);

    worker = await startWorker(ENV);
    const started = Date.now();
    try {
      await eventually(async () => other.receiver.requests[0], 15_000);
      // Without a share per account it waits for the whole backlog: 500 x 2 s / 10 at a time = 100 s.
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      // The rest of the backlog goes with its webhook (later tests must not see it pending).
      await greedy.http.delete(`/v1/webhooks/${greedy.webhookId}`);
    }
  }, 60_000);
});
