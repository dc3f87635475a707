import { Client, Pool } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dataSourceOptions } from './data-source-options';
import { ensureDatabase } from './ensure-database';
import { preparedQuery } from './prepared-query';
import { raw, sql } from './sql';
import { LazyTransaction, TransactionRunner } from './transaction-runner';
import { unitDatabase } from '@app/testing';

const TIMEOUT_MS = 4321;
const insertProbe = (name: string) =>
  sql`INSERT INTO transaction_probe (name) VALUES (${name}) RETURNING txid_current(), pg_backend_pid()`;
const INSERT = insertProbe('').text;
const TIMEOUT = `SELECT current_setting('statement_timeout') AS timeout, pg_backend_pid() AS pid`;

/**
 * Against the real Postgres. lazy() queues BEGIN on its query runner's connection as soon as the runner has one; these
 * fail if manager.query or preparedQuery run a statement elsewhere or ahead of BEGIN.
 */
describe('TransactionRunner.lazy', () => {
  const url = unitDatabase('transactions').url;
  // The database outlives a run: each run's names are its own.
  const run = Date.now().toString(36);
  const named = (what: string) => `${run}-${what}`;
  let direct: DataSource;
  let pooled: DataSource;
  let runner: TransactionRunner;
  let pooledRunner: TransactionRunner;

  const open = async (pooler: boolean, poolSize: number) => {
    const config = loadConfig({
      DATABASE_URL: url,
      DATABASE_TRANSACTION_POOLER: String(pooler),
      DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS),
    });
    const ds = await new DataSource(dataSourceOptions(config, { poolSize })).initialize();
    return [ds, new TransactionRunner(ds, config)] as const;
  };
  // A test that fails midway leaves its transaction to afterEach, not holding a connection in the next test.
  const opened: LazyTransaction[] = [];
  const lazy = (on = runner) => {
    const tx = on.lazy();
    opened.push(tx);
    return tx;
  };
  const rows = async (name: string) =>
    (await direct.query(`SELECT count(*)::int AS n FROM transaction_probe WHERE name = $1`, [name]))[0].n;

  beforeAll(async () => {
    await ensureDatabase(url);
    [direct, runner] = await open(false, 2);
    // One connection: the statement after a transaction runs on the connection the transaction had.
    [pooled, pooledRunner] = await open(true, 1);
    await direct.query(`CREATE TABLE IF NOT EXISTS transaction_probe (name text NOT NULL)`);
  });
  afterEach(() => Promise.all(opened.splice(0).map((tx) => tx.rollback())));
  afterAll(async () => {
    await direct?.destroy();
    await pooled?.destroy();
  });

  it('runs manager.query and preparedQuery(manager) on one connection in one transaction', async () => {
    const tx = lazy();
    const [viaTypeorm] = await tx.manager.query(INSERT, [named('one')]);
    const [viaPrepared] = await preparedQuery(tx.manager, insertProbe(named('one')));
    expect(viaPrepared).toEqual(viaTypeorm);
  });

  it('rollback() undoes what manager.query and preparedQuery(manager) wrote', async () => {
    const tx = lazy();
    await tx.manager.query(INSERT, [named('rolled-back')]);
    await preparedQuery(tx.manager, insertProbe(named('rolled-back')));
    await tx.rollback();
    expect(await rows(named('rolled-back'))).toBe(0);
  });

  it('commit() keeps what manager.query and preparedQuery(manager) wrote', async () => {
    const tx = lazy();
    await tx.manager.query(INSERT, [named('committed')]);
    await preparedQuery(tx.manager, insertProbe(named('committed')));
    await tx.commit();
    expect(await rows(named('committed'))).toBe(2);
  });

  it('runs statements issued together on first touch, before BEGIN has resolved, inside the transaction', async () => {
    const tx = lazy();
    const manager = tx.manager;
    const [[viaTypeorm], [viaPrepared]] = await Promise.all([
      manager.query(INSERT, [named('first-touch')]),
      preparedQuery(manager, insertProbe(named('first-touch'))),
    ]);
    const [later] = await manager.query(INSERT, [named('first-touch')]);
    await tx.rollback();
    expect([viaPrepared, later]).toEqual([viaTypeorm, viaTypeorm]);
    expect(await rows(named('first-touch'))).toBe(0);
  });

  it.each(['commit', 'rollback'] as const)(
    'holds no connection and sends nothing on %s() when the manager was never touched',
    async (end) => {
      const taken = jest.spyOn(Pool.prototype, 'connect');
      const queries = jest.spyOn(Client.prototype, 'query');
      try {
        const tx = lazy();
        await tx[end]();
        expect([tx.begun, taken.mock.calls.length, queries.mock.calls.length]).toEqual([false, 0, 0]);
      } finally {
        taken.mockRestore();
        queries.mockRestore();
      }
    },
  );

  it('behind a pooler, runs the statements issued on first touch under the configured timeout', async () => {
    const { manager } = lazy(pooledRunner);
    const [[viaTypeorm], [viaPrepared]] = await Promise.all([
      manager.query(TIMEOUT),
      preparedQuery(manager, sql`${raw(TIMEOUT)}`),
    ]);
    expect([viaTypeorm.timeout, viaPrepared.timeout]).toEqual([`${TIMEOUT_MS}ms`, `${TIMEOUT_MS}ms`]);
  });

  it('behind a pooler, the timeout ends with the transaction: its connection has the default after COMMIT', async () => {
    const [before] = await pooled.query(TIMEOUT);
    expect(before.timeout).not.toBe(`${TIMEOUT_MS}ms`);
    const tx = lazy(pooledRunner);
    const [inside] = await tx.manager.query(TIMEOUT);
    await tx.commit();
    const [after] = await pooled.query(TIMEOUT);
    expect([inside.pid, after]).toEqual([before.pid, before]);
  });
});
