import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import { preparedQuery, sql } from '@app/database';
import { featureModules } from './feature-modules';

const PREPARED = `SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1`;

/** preparedQuery outside a transaction: a pooled connection, a named statement, the connection given back. */
describe('preparedQuery on the pool', () => {
  let app: INestApplicationContext;
  let dataSource: DataSource;

  beforeAll(async () => {
    app = await featureModules();
    dataSource = app.get(DataSource);
  });
  afterAll(() => app?.close());

  it('runs the statement by name: its connection lists it among its prepared statements', async () => {
    const prepared = sql`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = ${PREPARED}`;
    expect(await preparedQuery<{ n: number }>(dataSource, prepared)).toEqual([{ n: 1 }]);
  });

  it('gives each connection back: more statements one after another than the pool holds', async () => {
    const statements = app.get(AppConfig).databasePoolSize + 1;
    for (let i = 0; i < statements; i++)
      expect(await preparedQuery<{ n: number }>(dataSource, sql`SELECT ${i}::int + 1 AS n`)).toEqual([{ n: i + 1 }]);
  });
});
