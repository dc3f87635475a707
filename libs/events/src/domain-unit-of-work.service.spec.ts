import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dataSourceOptions, migrate, TransactionRunner } from '@app/database';
import { OutboxDispatch, OutboxStaging, UnitOfWork } from '@app/jobs';
import { NewDomainEvent } from './domain-event-types';
import { DomainUnitOfWork } from './domain-unit-of-work.service';
import { LiveEvents } from './live-events';
import { unitDatabase } from '@app/testing';

describe('DomainUnitOfWork against the real Postgres', () => {
  const config = loadConfig({ DATABASE_URL: unitDatabase('events').url });
  let ds: DataSource;
  let tx: DomainUnitOfWork;
  const publish = jest.fn(async (_events: { type: string; sequence: number }[]) => undefined);

  beforeAll(async () => {
    await migrate(config);
    ds = await new DataSource(dataSourceOptions(config, { poolSize: 12 })).initialize();
    // Dispatch is out of scope here: no Redis, so the staged rows stay in the outbox.
    const dispatch = { dispatch: async () => undefined } as unknown as OutboxDispatch;
    const live = { publish } as unknown as LiveEvents;
    const uow = new UnitOfWork(ds, new TransactionRunner(ds, config), new OutboxStaging(), dispatch);
    tx = new DomainUnitOfWork(uow, live);
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
    const staged = await ds.query(`SELECT payload FROM outbox WHERE job_id = $1`, [`events-pending-${eventId}`]);
    expect(staged.map((r: { payload: object }) => r.payload)).toEqual([{ accountId, eventId }]);
  });

  it('stages one fan-out job for the subscribed events a unit records in one account, named after the first', async () => {
    const [{ id: accountId }] = await ds.query(
      `INSERT INTO accounts (name, plan) VALUES ('fan3', 'free') RETURNING id`,
    );
    await ds.query(
      `INSERT INTO webhooks (account_id, url, events, secret) VALUES ($1, 'https://example.com/hook', '{pet.created}', 's')`,
      [accountId],
    );
    const created = (resourceId: number): NewDomainEvent => ({
      accountId,
      type: 'pet.created',
      resourceType: 'pet',
      resourceId,
      data: {},
    });
    await tx.run((t) => t.emitMany([created(1), created(2), created(3)]));
    const [{ id: first }] = await ds.query(`SELECT min(id) AS id FROM events WHERE account_id = $1`, [accountId]);
    const staged = await ds.query(`SELECT job_name, payload FROM outbox WHERE payload->>'accountId' = $1`, [
      String(accountId),
    ]);
    expect(staged).toEqual([{ job_name: 'event.fan-out-pending', payload: { accountId, eventId: Number(first) } }]);
  });

  it('publishes the events live once their unit has committed', async () => {
    const [{ id: accountId }] = await ds.query(
      `INSERT INTO accounts (name, plan) VALUES ('live', 'free') RETURNING id`,
    );
    publish.mockClear();
    await tx.run(async (t) => {
      await t.emit({ accountId, type: 'pet.created', resourceType: 'pet', resourceId: 8, data: {} });
      expect(publish).not.toHaveBeenCalled();
    });
    expect(publish.mock.calls.map(([events]) => events.map((e) => [e.type, e.sequence]))).toEqual([
      [['pet.created', 1]],
    ]);
  });

  it('publishes nothing live when the work fails', async () => {
    const [{ id: accountId }] = await ds.query(
      `INSERT INTO accounts (name, plan) VALUES ('dead', 'free') RETURNING id`,
    );
    publish.mockClear();
    const work = tx.run(async (t) => {
      await t.emit({ accountId, type: 'pet.created', resourceType: 'pet', resourceId: 9, data: {} });
      throw new Error('work failed');
    });
    await expect(work).rejects.toThrow('work failed');
    expect(publish).not.toHaveBeenCalled();
  });
});
