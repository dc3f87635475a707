import { INestApplicationContext } from '@nestjs/common';
import { Queue } from 'bullmq';
import { EventQueue } from '@app/events';
import { loadConfig } from '@app/config';
import { MaintenanceQueue, queuePrefix } from '@app/jobs';
import { eventually } from '../../support/http';
import { startWorker } from '../../support/test-apps';

const { redisNamespace: namespace } = loadConfig();
const queueOf = (name: string) =>
  new Queue(name, { prefix: queuePrefix(namespace, name), connection: { url: process.env.REDIS_URL } });

describe('job schedulers', () => {
  let worker: INestApplicationContext | undefined;
  const events = queueOf(EventQueue.name);
  const maintenance = queueOf(MaintenanceQueue.name);
  afterAll(async () => {
    await worker?.close();
    await Promise.all([events.close(), maintenance.close()]);
  });

  it('move with their job to its queue: one left on another queue by an earlier release is removed', async () => {
    // As the release that ran retention and usage aggregation on the events queue left them.
    await events.upsertJobScheduler('retention', { every: 60_000 }, { name: 'retention.run' });
    await events.upsertJobScheduler('usage-aggregate', { every: 60_000 }, { name: 'usage.aggregate' });

    worker = await startWorker();
    await eventually(async () => (await events.getJobSchedulers()).length === 0);
    expect((await maintenance.getJobSchedulers()).map((s) => s.key).sort()).toEqual(['retention', 'usage-aggregate']);
  });
});
