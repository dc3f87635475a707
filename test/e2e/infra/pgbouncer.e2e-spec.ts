import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { preparedQuery, sql, TransactionRunner } from '@app/database';
import { eventually, HttpClient } from '../../support/http';
import { PgBouncer } from '../../support/pgbouncer';
import { closeAll, createAccount, RunningApi, startApi, startWorker } from '../../support/test-apps';
import { describeWith } from '../../support/external-binary';

/**
 * The API and the worker behind a real PgBouncer in transaction mode (Debian's 1.18, which
 * refuses start-up parameters it does not know and has no named-statement support), with
 * DATABASE_TRANSACTION_POOLER=true. Four server connections serve everything.
 */
describeWith('pgbouncer', 'apt-get install -y pgbouncer')('PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  let api: RunningApi;
  let worker: INestApplicationContext;
  let http: HttpClient;
  let categoryId: number;

  beforeAll(async () => {
    bouncer = await PgBouncer.inFrontOf(process.env.DATABASE_URL!, 4);
    const env = {
      DATABASE_URL: bouncer.urlFor(process.env.DATABASE_URL!),
      DATABASE_TRANSACTION_POOLER: 'true',
      DATABASE_STATEMENT_TIMEOUT_MS: '500',
    };
    api = await startApi(env);
    worker = await startWorker(env);
    const { apiKey } = await createAccount(api, 'enterprise', { limitPerMinute: 100_000, limitPerDay: 1_000_000 });
    http = new HttpClient(api.url, apiKey);
    categoryId = (await http.post('/v1/categories', { name: 'Pooled' })).body.id;
  });
  afterAll(() => closeAll([() => worker?.close(), () => api?.close(), () => bouncer?.stop()]));

  it('answers concurrent writes and reads, each the same statements on changing server connections', async () => {
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) => http.post('/v1/pets', { name: `pooled ${i}`, categoryId })),
    );
    expect(created.map((r) => r.status)).toEqual(created.map(() => 201));
    const read = await Promise.all(created.map((r) => http.get(`/v1/pets/${r.body.id}`)));
    expect(read.map((r) => r.body.name).sort()).toEqual(created.map((r) => r.body.name).sort());
    expect((await http.get('/v1/pets?limit=100')).status).toBe(200);
  });

  it('carries messages and orders through the outbox, the relay and the worker', async () => {
    const messages = await Promise.all(
      Array.from({ length: 20 }, (_, i) => http.post('/v1/messages', { message: `pooled ${i}` })),
    );
    expect(messages.map((r) => r.status)).toEqual(messages.map(() => 202));
    const pet = (await http.post('/v1/pets', { name: 'pooled order', categoryId })).body.id;
    const order = await http.post('/v1/store/orders', { petId: pet });
    expect(order.status).toBe(201);
    await eventually(async () => {
      const done = await Promise.all(messages.map((r) => http.get(`/v1/messages/${r.body.id}`)));
      return done.every((r) => r.body.status === 'processed');
    });
    await eventually(async () => (await http.get(`/v1/store/orders/${order.body.id}`)).body.complete, 15_000);
  });

  it('cancels a transaction statement that runs past DATABASE_STATEMENT_TIMEOUT_MS', async () => {
    const started = Date.now();
    const slow = api.app.get(TransactionRunner).run((manager) => preparedQuery(manager, sql`SELECT pg_sleep(${3})`));
    await expect(slow).rejects.toMatchObject({ code: '57014' }); // query_canceled
    expect(Date.now() - started).toBeLessThan(2_500);
    // The server connection that ran it serves the next transaction with no timeout left over.
    await expect(
      api.app.get(DataSource).query('SELECT current_setting($1) AS t', ['statement_timeout']),
    ).resolves.toEqual([{ t: '0' }]);
  });
});
