import { INestApplicationContext } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { rangePartitions, TIME_ORDERED_ID_SCALE } from '@app/database';
import { newMessageId } from '@app/messages';
import { JobCatalog, MaintenanceQueue, RetentionJob } from '@app/jobs';
import { WORKER_FEATURES } from '../../../apps/worker/src/worker.module';
import { expectErrorBody } from '../../support/expect-error';
import { eventually, HttpClient } from '../../support/http';
import { jobRuns } from '../../support/quiescence';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { WebhookReceiver } from '@app/testing';

/** Finished records past retention are removed by the worker's job, by dropping whole partitions (1-second ones here). */
describe('retention', () => {
  let api: RunningApi;
  let workers: INestApplicationContext[];
  let receiver: WebhookReceiver;
  let db: DataSource;
  let client: HttpClient;
  let accountId: number;

  // The smallest scale the config allows (a partition is at least a second): each wait below is a few of them.
  const WIDTH_MS = 1_000;
  const MESSAGES_MS = 3_000;
  const EVENTS_MS = 4_000;
  const days = (ms: number) => String(ms / 86_400_000);
  const RETENTION = {
    RETENTION_INTERVAL_MS: '500',
    ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    PARTITION_WIDTH_SECONDS: String(WIDTH_MS / 1000),
    PARTITIONS_AHEAD: '2',
    RETENTION_MESSAGES_DAYS: days(MESSAGES_MS),
    RETENTION_WEBHOOK_DELIVERIES_DAYS: days(MESSAGES_MS),
    RETENTION_EVENTS_DAYS: days(EVENTS_MS),
    // Below the events' retention, as the config requires.
    WEBHOOK_MAX_AGE_SECONDS: String(EVENTS_MS / 1000 - 1),
  };
  /** How long a drop that is due may take: a partition's end, the longest retention and a run are seconds. */
  const EXPIRY_MS = 20_000;

  beforeAll(async () => {
    api = await startApi(RETENTION);
    workers = await Promise.all([startWorker(RETENTION), startWorker(RETENTION)]);
    receiver = await new WebhookReceiver().start();
    db = api.app.get(DataSource);
    const account = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    accountId = account.accountId;
    client = new HttpClient(api.url, account.apiKey);
  });
  afterAll(() => closeAll([...workers.map((w) => () => w.close()), () => api?.close(), () => receiver?.close()]));

  /** Sends messages and waits until they are processed; their ids. */
  async function processedMessages(count: number): Promise<string[]> {
    const ids = (
      await Promise.all(Array.from({ length: count }, (_, i) => client.post('/v1/messages', { message: `r ${i}` })))
    ).map((r) => r.body.id as string);
    await eventually(async () => {
      const [{ open }] = await db.query(
        `SELECT count(*)::int AS open FROM messages WHERE id = ANY($1) AND status <> 'processed'`,
        [ids],
      );
      return open === 0;
    });
    return ids;
  }

  /** The partition holding the row. */
  const partitionOf = async (table: string, id: string | number): Promise<string | undefined> =>
    (await db.query(`SELECT tableoid::regclass::text AS p FROM ${table} WHERE id = $1`, [id]))[0]?.p;
  const exists = async (relation: string) =>
    (await db.query(`SELECT to_regclass($1) IS NOT NULL AS e`, [relation]))[0].e as boolean;

  /**
   * Waits until the partition's rows are all past `keepMs`, then for two retention runs begun after that (on either
   * worker): a partition still there then was kept, not waiting for its turn.
   */
  async function pastRetention(table: string, partition: string, keepMs: number): Promise<void> {
    const { partitioned } = new JobCatalog(WORKER_FEATURES).retention.find((s) => s.partitioned?.table === table)!;
    const { toMs } = (await rangePartitions(db, partitioned!)).find((p) => p.name === partition)!;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, toMs + keepMs - Date.now())));
    await jobRuns(workers, RetentionJob, 2);
  }

  it('drops the partition of processed messages past RETENTION_MESSAGES_DAYS (then 404), with their sequence counters', async () => {
    const old = await processedMessages(3);
    // Partitions are a second wide: the three may straddle two.
    const partitions = [...new Set(await Promise.all(old.map((id) => partitionOf('messages', id))))];
    for (const partition of partitions) expect(partition).toMatch(/^messages_p\d{8}t\d{6}$/);
    await eventually(async () => !(await Promise.all(partitions.map((p) => exists(p!)))).includes(true), EXPIRY_MS);
    const fresh = await processedMessages(1);
    expectErrorBody(await client.get(`/v1/messages/${old[0]}`), 404, 'not_found');
    expect((await client.get(`/v1/messages/${fresh[0]}`)).status).toBe(200);
    const [{ counters }] = await db.query(
      `SELECT count(*)::int AS counters FROM event_sequences WHERE resource_type = 'message' AND resource_id = ANY($1)`,
      [old],
    );
    expect(counters).toBe(0);
  });

  it('keeps a partition while one of its messages is not final, however old', async () => {
    const done = await processedMessages(1);
    // Not processed before the end of the test: the lost-job sweep gives it a job after SWEEP_INTERVAL_MS (30 s).
    // Its id has the processed message's millisecond, so the two share a partition.
    const [{ id }] = await db.query(
      `INSERT INTO messages (id, account_id, message, status, attempts) VALUES ($1, $2, 'still open', 'queued', 0) RETURNING id`,
      [newMessageId(parseInt(done[0].slice('msg_'.length, 'msg_'.length + 12), 16)), accountId],
    );
    const partition = await partitionOf('messages', id);
    await pastRetention('messages', partition!, MESSAGES_MS);
    expect(await partitionOf('messages', id)).toBe(partition);
    expect(await partitionOf('messages', done[0])).toBe(partition);
    await db.query(`DELETE FROM messages WHERE id = $1`, [id]);
    await eventually(async () => !(await exists(partition!)), EXPIRY_MS);
  });

  it('keeps a partition of events while one of its rows is younger than the retention, whatever its id', async () => {
    // As if taken from the sequence before a late job moved it up: an id of this period, created an hour later.
    const [{ id }] = await db.query(
      `INSERT INTO events (id, account_id, type, resource_type, resource_id, sequence, data, created_at)
       VALUES ($1, $2, 'pet.created', 'pet', 'late', 1, '{}', now() + interval '1 hour') RETURNING id`,
      [Date.now() * TIME_ORDERED_ID_SCALE + 1, accountId],
    );
    const partition = await partitionOf('events', id);
    expect(partition).toMatch(/^events_p\d{8}t\d{6}$/);
    await pastRetention('events', partition!, EVENTS_MS);
    expect(await partitionOf('events', id)).toBe(partition);
    await db.query(`DELETE FROM events WHERE id = $1`, [id]);
    await eventually(async () => !(await exists(partition!)), EXPIRY_MS);
  });

  it('drops the partitions of events and deliveries past their retention, and keeps orders', async () => {
    expect((await client.post('/v1/webhooks', { url: receiver.url, events: ['order.completed'] })).status).toBe(201);
    const category = (await client.post('/v1/categories', { name: 'retention' })).body.id;
    const pet = (await client.post('/v1/pets', { name: 'retention pet', categoryId: category })).body.id;
    await client.put(`/v1/store/inventory/${pet}`, { quantity: 5 });
    const order = (await client.post('/v1/store/orders', { petId: pet })).body.id;
    await eventually(async () => receiver.requests.length === 1, 20_000);
    const [{ id: event }] = await db.query(
      `SELECT id FROM events WHERE type = 'order.completed' AND resource_id = $1`,
      [String(order)],
    );
    const [delivery] = await eventually(async () => {
      const rows = await db.query(`SELECT id FROM webhook_deliveries WHERE event_id = $1 AND status = 'delivered'`, [
        event,
      ]);
      return rows.length ? rows : undefined;
    });
    const [eventPartition, deliveryPartition] = [
      await partitionOf('events', event),
      await partitionOf('webhook_deliveries', delivery.id),
    ];
    expect([eventPartition, deliveryPartition]).toEqual([
      expect.stringMatching(/^events_p/),
      expect.stringMatching(/^webhook_deliveries_p/),
    ]);
    await eventually(async () => !(await exists(eventPartition!)) && !(await exists(deliveryPartition!)), EXPIRY_MS);
    const [{ complete }] = await db.query(`SELECT complete FROM orders WHERE id = $1`, [order]);
    expect(complete).toBe(true);
  });

  it('runs from one job scheduler, however many workers there are', async () => {
    const queue = workers[0].get<Queue>(getQueueToken(MaintenanceQueue.name), { strict: false });
    const schedulers = await queue.getJobSchedulers();
    // One of each scheduled job (usage-aggregate is the other), not one per worker.
    expect(schedulers.map((s) => s.key).sort()).toEqual(['retention', 'usage-aggregate']);
    expect(schedulers.find((s) => s.key === 'retention')?.every).toBe(500);
  });

  it('keeps the current period and PARTITIONS_AHEAD more created for every partitioned table', async () => {
    // As of a run's start: a period that began since the last run has its partitions made ahead by the next.
    const [began] = await jobRuns(workers, RetentionJob, 1);
    for (const table of ['messages', 'events', 'webhook_deliveries', 'usage_minutes']) {
      const [{ ahead }] = await db.query(
        `SELECT count(*)::int AS ahead FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = $1::regclass AND c.relname > $2`,
        [table, `${table}_p${new Date(began).toISOString().replace(/[-:]/g, '').slice(0, 15).toLowerCase()}`],
      );
      expect({ table, ahead }).toEqual({ table, ahead: expect.any(Number) });
      expect(ahead).toBeGreaterThanOrEqual(2);
    }
  });

  it('takes a row of a period no partition covers yet into the overflow partition, then into its own', async () => {
    // Three periods past the last of those made ahead (the current one and two more).
    const [{ id }] = await db.query(
      `INSERT INTO messages (id, account_id, message, status, attempts) VALUES ($1, $2, 'ahead', 'processed', 1) RETURNING id`,
      [newMessageId(Date.now() + 6 * WIDTH_MS), accountId],
    );
    expect(await partitionOf('messages', id)).toBe('messages_overflow');
    await eventually(async () => (await partitionOf('messages', id))?.startsWith('messages_p'), EXPIRY_MS);
  });

  it('drops partitions under load without losing a write or a read of a live row', async () => {
    const failures: string[] = [];
    // `at`: sent then, so the message's id (and its partition's end) is no older.
    const live: { id: string; at: number }[] = [];
    let reads = 0;
    // At least 8 periods, then until the first partition is gone and enough reads were made, whatever the machine's speed.
    const started = Date.now();
    let until = Number.POSITIVE_INFINITY;
    // Younger than the messages' retention by half of it: never due for a drop.
    const young = (m: { at: number }, now: number) => m.at > now - MESSAGES_MS / 2;
    const writer = async () => {
      while (Date.now() < until) {
        const at = Date.now();
        const r = await client.post('/v1/messages', { message: 'under load' });
        if (r.status === 202) live.push({ id: r.body.id, at });
        else failures.push(`POST ${r.status}`);
      }
    };
    const reader = async () => {
      while (Date.now() < until) {
        const now = Date.now();
        const readable = live.filter((m) => young(m, now));
        if (!readable.length) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          continue;
        }
        const m = readable[Math.floor(Math.random() * readable.length)];
        const r = await client.get(`/v1/messages/${m.id}`);
        reads++;
        if (r.status !== 200) failures.push(`GET ${m.id} ${r.status}`);
        const page = await client.get(`/v1/messages?order=newest&limit=5`);
        if (page.status !== 200) failures.push(`list ${page.status}`);
      }
    };
    const first = (await client.post('/v1/messages', { message: 'first of the load' })).body.id as string;
    const firstPartition = await partitionOf('messages', first);
    const watcher = async () => {
      while (Date.now() - started < 90_000) {
        if (Date.now() - started > 8 * WIDTH_MS && reads > 50 && !(await exists(firstPartition!))) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      until = Date.now();
    };
    await Promise.all([watcher(), writer(), writer(), reader(), reader()]);
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(50);
    // The load's first partition went while it ran.
    expect(await exists(firstPartition!)).toBe(false);
    const lastYoung = live.filter((m) => young(m, until));
    const [{ kept }] = await db.query(`SELECT count(*)::int AS kept FROM messages WHERE id = ANY($1)`, [
      lastYoung.map((m) => m.id),
    ]);
    expect(kept).toBe(lastYoung.length);
  }, 150_000);
});
