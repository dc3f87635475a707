import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dataSourceOptions, migrate, preparedQuery, sql, TransactionRunner } from '@app/database';
import { LiveEvents, NewDomainEvent } from '@app/events';
import { defineJob, defineQueue, OutboxDispatch, OutboxRow } from '@app/jobs';
import { unitDatabase } from '@app/testing';
import { UnitOfWork } from './unit-of-work.service';

const TestJob = defineJob<{ id: string }>({
  name: 'unit-of-work.test',
  queue: defineQueue('unit-of-work-test'),
  jobId: ({ id }) => id,
});
const insertAccount = (name: string) => sql`INSERT INTO accounts (name, plan) VALUES (${name}, 'free')`;

describe('UnitOfWork against the real Postgres', () => {
  const config = loadConfig({ DATABASE_URL: unitDatabase('transactions').url });
  const dispatched: OutboxRow[][] = [];
  const publish = jest.fn(async (_events: { type: string; sequence: number }[]) => undefined);
  let ds: DataSource;
  let uow: UnitOfWork;

  beforeAll(async () => {
    await migrate(config);
    ds = await new DataSource(dataSourceOptions(config, { poolSize: 12 })).initialize();
    // No Redis: the dispatcher and the live events only record what they were given.
    const dispatch = { dispatch: async (rows: OutboxRow[]) => void dispatched.push(rows) } as unknown as OutboxDispatch;
    uow = new UnitOfWork(ds, new TransactionRunner(ds, config), dispatch, { publish } as unknown as LiveEvents);
  });
  afterAll(() => ds?.destroy());
  beforeEach(() => {
    dispatched.length = 0;
    publish.mockClear();
  });
  // The database outlives a run: each run's names are its own.
  const run = Date.now().toString(36);
  const named = (what: string) => `${run}-${what}`;

  const accounts = async (name: string) =>
    (await ds.query(`SELECT count(*)::int AS n FROM accounts WHERE name = $1`, [name]))[0].n;
  const outboxRows = async (jobId: string) =>
    (await ds.query(`SELECT count(*)::int AS n FROM outbox WHERE job_id = $1`, [jobId]))[0].n;

  it('sends a work of deferred writes and jobs to Postgres as one statement', async () => {
    const queries = jest.spyOn(Client.prototype, 'query');
    try {
      await uow.run(async (tx) => {
        tx.write(insertAccount(named('one-trip')));
        tx.write(insertAccount(named('one-trip')));
        tx.enqueue(TestJob, { id: named('one-trip') });
      });
      expect(queries).toHaveBeenCalledTimes(1);
    } finally {
      queries.mockRestore();
    }
    expect([await accounts(named('one-trip')), await outboxRows(named('one-trip'))]).toEqual([2, 1]);
    expect(dispatched.flat().map((r) => r.jobId)).toEqual([named('one-trip')]);
  });

  it('commits a work that reads through the manager in one transaction with its deferred writes and jobs', async () => {
    await uow.run(async (tx) => {
      await preparedQuery(tx.manager, insertAccount(named('in-tx')));
      tx.write(insertAccount(named('in-tx')));
      tx.enqueue(TestJob, { id: named('in-tx') });
    });
    expect([await accounts(named('in-tx')), await outboxRows(named('in-tx'))]).toEqual([2, 1]);
    expect(dispatched.flat().map((r) => r.jobId)).toEqual([named('in-tx')]);
  });

  it('commits nothing and dispatches nothing when the work fails', async () => {
    const work = uow.run(async (tx) => {
      await preparedQuery(tx.manager, insertAccount(named('failed')));
      tx.write(insertAccount(named('failed')));
      tx.enqueue(TestJob, { id: named('failed') });
      throw new Error('work failed');
    });
    await expect(work).rejects.toThrow('work failed');
    expect([await accounts(named('failed')), await outboxRows(named('failed')), dispatched]).toEqual([0, 0, []]);
  });

  it('commits neither a deferred write nor its jobs when their one statement fails', async () => {
    await expect(
      uow.run(async (tx) => {
        tx.write(insertAccount(named('bad-write')));
        tx.write(sql`INSERT INTO accounts (name, plan) VALUES (${named('bad-write')}, 'no-such-plan')`);
        tx.enqueue(TestJob, { id: named('bad-write') });
      }),
    ).rejects.toThrow(/violates check constraint/);
    expect([await accounts(named('bad-write')), await outboxRows(named('bad-write')), dispatched]).toEqual([0, 0, []]);
  });

  it('dispatches each job with the id of its own outbox row', async () => {
    const ids = ['a', 'b', 'c'].map((k) => named(`paired-${k}`));
    await uow.run(async (tx) => {
      for (const id of ids) tx.enqueue(TestJob, { id });
    });
    const stored = await ds.query(`SELECT id::int, job_id AS "jobId" FROM outbox WHERE job_id = ANY($1)`, [ids]);
    const dispatchedPairs = dispatched.flat().map((r) => ({ id: r.id, jobId: r.jobId }));
    expect(dispatchedPairs).toEqual(
      ids.map((jobId) => ({ id: stored.find((s: OutboxRow) => s.jobId === jobId).id, jobId })),
    );
  });

  it('binds the jobs of a batch as one JSON text, not as an array per column', async () => {
    const queries = jest.spyOn(Client.prototype, 'query');
    try {
      await uow.run(async (tx) => {
        tx.enqueue(TestJob, { id: named('json-a') });
        tx.enqueue(TestJob, { id: named('json-b') });
      });
      const [{ values }] = queries.mock.calls[0] as unknown as [{ values: unknown[] }];
      expect(values).toEqual([expect.any(String)]);
    } finally {
      queries.mockRestore();
    }
    expect([await outboxRows(named('json-a')), await outboxRows(named('json-b'))]).toEqual([1, 1]);
  });

  const newAccount = async (what: string): Promise<number> =>
    (await ds.query(`INSERT INTO accounts (name, plan) VALUES ($1, 'free') RETURNING id`, [named(what)]))[0].id;
  const subscribe = (accountId: number) =>
    ds.query(
      `INSERT INTO webhooks (account_id, url, events, secret) VALUES ($1, 'https://example.com/hook', '{pet.created}', 's')`,
      [accountId],
    );

  it('numbers 10 concurrent events on one resource 1..10', async () => {
    const accountId = await newAccount('seq');
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        uow.run(async (tx) => {
          await tx.emit({ accountId, type: 'pet.updated', resourceType: 'pet', resourceId: 42, data: { i } });
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
    const accountId = await newAccount('fan');
    await subscribe(accountId);
    await uow.run((tx) => tx.emit({ accountId, type: 'pet.created', resourceType: 'pet', resourceId: 7, data: {} }));
    const [{ id: eventId }] = await ds.query(`SELECT id FROM events WHERE account_id = $1`, [accountId]);
    const staged = await ds.query(`SELECT payload FROM outbox WHERE job_id = $1`, [`events-pending-${eventId}`]);
    expect(staged.map((r: { payload: object }) => r.payload)).toEqual([{ accountId, eventId }]);
  });

  it('stages one fan-out job for the subscribed events a unit records in one account, named after the first', async () => {
    const accountId = await newAccount('fan3');
    await subscribe(accountId);
    const created = (resourceId: number): NewDomainEvent => ({
      accountId,
      type: 'pet.created',
      resourceType: 'pet',
      resourceId,
      data: {},
    });
    await uow.run((tx) => tx.emitMany([created(1), created(2), created(3)]));
    const [{ id: first }] = await ds.query(`SELECT min(id) AS id FROM events WHERE account_id = $1`, [accountId]);
    const staged = await ds.query(`SELECT job_name, payload FROM outbox WHERE payload->>'accountId' = $1`, [
      String(accountId),
    ]);
    expect(staged).toEqual([{ job_name: 'event.fan-out-pending', payload: { accountId, eventId: Number(first) } }]);
  });

  it('publishes the events live once their unit has committed', async () => {
    const accountId = await newAccount('live');
    await uow.run(async (tx) => {
      await tx.emit({ accountId, type: 'pet.created', resourceType: 'pet', resourceId: 8, data: {} });
      expect(publish).not.toHaveBeenCalled();
    });
    expect(publish.mock.calls.map(([events]) => events.map((e) => [e.type, e.sequence]))).toEqual([
      [['pet.created', 1]],
    ]);
  });

  it('publishes nothing live when the work fails', async () => {
    const accountId = await newAccount('dead');
    const work = uow.run(async (tx) => {
      await tx.emit({ accountId, type: 'pet.created', resourceType: 'pet', resourceId: 9, data: {} });
      throw new Error('work failed');
    });
    await expect(work).rejects.toThrow('work failed');
    expect(publish).not.toHaveBeenCalled();
  });
});
