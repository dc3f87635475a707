import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { poolOf, preparedQuery, sql } from '@app/database';
import { featureModules } from './feature-modules';

/** preparedQuery outside a transaction runs on TypeORM's own pg pool, reached through driver.master. */
describe('preparedQuery on the pool', () => {
  let app: INestApplicationContext;
  let dataSource: DataSource;

  beforeAll(async () => {
    app = await featureModules();
    dataSource = app.get(DataSource);
  });
  afterAll(() => app?.close());

  it('finds the pg pool TypeORM keeps, runs the statement on it and gives the connection back', async () => {
    const pool = poolOf(dataSource);
    const rows = await preparedQuery<{ n: number }>(dataSource, sql`SELECT ${41}::int + 1 AS n`);
    expect(rows).toEqual([{ n: 42 }]);
    expect(pool.totalCount).toBeGreaterThan(0);
    expect(pool.idleCount).toBe(pool.totalCount);
  });

  it('says so at once when a TypeORM release no longer keeps the pool at driver.master', () => {
    const moved = Object.assign(Object.create(DataSource.prototype) as DataSource, { driver: {} });
    expect(() => poolOf(moved)).toThrow(/driver\.master/);
  });
});
