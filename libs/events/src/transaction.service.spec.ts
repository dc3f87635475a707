import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dataSourceOptions, migrate, TransactionRunner } from '@app/database';
import { OutboxDispatch, OutboxStaging, stagedJob } from '@app/jobs';
import { newMessageId, ProcessMessageJob } from '@app/messages';
import { LiveEvents } from './live-events';
import { TransactionService } from './transaction.service';
import { unitDatabase } from '../../../test/support/unit-database';

describe('TransactionService against the real Postgres', () => {
  const config = loadConfig({ DATABASE_URL: unitDatabase('events').url });
  let ds: DataSource;
  let tx: TransactionService;

  beforeAll(async () => {
    await migrate(config);
    ds = await new DataSource(dataSourceOptions(config, { poolSize: 12 })).initialize();
    // Dispatch is out of scope here: no Redis, so the staged rows stay in the outbox.
    const dispatch = { dispatch: async () => undefined } as unknown as OutboxDispatch;
    const live = { publish: async () => undefined } as unknown as LiveEvents;
    tx = new TransactionService(new TransactionRunner(ds, config), new OutboxStaging(ds), dispatch, live);
  });
  afterAll(() => ds?.destroy());

  it('numbers 10 concurrent events on one resource 1..10', async () => {
    const [{ id: accountId }] = await ds.query(`INSERT INTO accounts (name, plan) VALUES ('seq', 'free') RETURNING id`);
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        tx.run(async (t) => {
          await t.emit({ accountId, type: 'pet.updated', resourceType: 'pet', resourceId: 42, data: { i } });
          await new Promise((r) => setTimeout(r, 20));
        }),
      ),
    );
    const rows: { sequence: number }[] = await ds.query(
      `SELECT sequence FROM events WHERE account_id = $1 ORDER BY sequence`,
      [accountId],
    );
    expect(rows.map((r) => r.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("stages an event's fan-out job, with its account and id, when an active webhook subscribes to it", async () => {
    const [{ id: accountId }] = await ds.query(`INSERT INTO accounts (name, plan) VALUES ('fan', 'free') RETURNING id`);
    await ds.query(
      `INSERT INTO webhooks (account_id, url, events, secret) VALUES ($1, 'https://example.com/hook', '{pet.created}', 's')`,
      [accountId],
    );
    await tx.run((t) => t.emit({ accountId, type: 'pet.created', resourceType: 'pet', resourceId: 7, data: {} }));
    const [{ id: eventId }] = await ds.query(`SELECT id FROM events WHERE account_id = $1`, [accountId]);
    const staged = await ds.query(`SELECT payload FROM outbox WHERE job_id = $1`, [`event-${eventId}`]);
    expect(staged.map((r: { payload: object }) => r.payload)).toEqual([{ accountId, eventId }]);
  });

  it('runStatement commits the statement and its outbox rows together, or neither', async () => {
    const [{ id: accountId }] = await ds.query(`INSERT INTO accounts (name, plan) VALUES ('one', 'free') RETURNING id`);
    const id = newMessageId();
    const insert = `INSERT INTO messages (id, account_id, message, status, attempts, created_at)
                    VALUES ($1, $2, 'hi', 'queued', 0, now())`;
    const job = (messageId: string) => [stagedJob(ProcessMessageJob, { accountId, messageId })];
    await tx.runStatement(insert, [id, accountId], job(id));
    const outboxRows = async (messageId: string) =>
      (await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE job_id = $1`, [messageId]))[0].n;
    expect(await outboxRows(id)).toBe(1);

    // The same id again violates the primary key: the outbox row of the failed write must not stay.
    const again = job(`${id}-dup`);
    await expect(tx.runStatement(insert, [id, accountId], again)).rejects.toThrow(/duplicate key/);
    expect(await outboxRows(`${id}-dup`)).toBe(0);
    expect((await ds.query(`SELECT count(*)::int AS n FROM messages WHERE id = $1`, [id]))[0].n).toBe(1);
  });
});
