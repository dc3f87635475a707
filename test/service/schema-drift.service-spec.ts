import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CatalogModule } from '@app/catalog';
import { SCHEMA_EXCEPTIONS, SchemaException } from '@app/database';
import { MessagesModule } from '@app/messages';
import { StoreModule } from '@app/store';
import { UsageModule } from '@app/usage';
import { WebhooksModule } from '@app/webhooks';
import { featureModules } from './feature-modules';

const describeException = (e: SchemaException) => `${e.index ? `index ${e.index} on ` : ''}${e.table}: ${e.why}`;

/**
 * The entities are the schema in code, the migrations the only way it changes: on a freshly
 * migrated database TypeORM's schema diff against the entities (what `synchronize` would run)
 * must be empty, but for what SCHEMA_EXCEPTIONS leaves to the migrations.
 */
describe('schema drift (the entities of every feature module against the migrated database)', () => {
  let app: INestApplicationContext;
  let dataSource: DataSource;

  beforeAll(async () => {
    app = await featureModules(CatalogModule, StoreModule, MessagesModule, WebhooksModule, UsageModule.register('api'));
    dataSource = app.get(DataSource);
  });
  afterAll(() => app?.close());

  it('TypeORM would change nothing to make the migrated database match the entities', async () => {
    const { upQueries } = await dataSource.driver.createSchemaBuilder().log();
    const report = upQueries.length
      ? [
          'The entities and the migrations disagree; to match the entities TypeORM would run:',
          ...upQueries.map((q) => `  ${q.query};`),
          'Left to the migrations (SCHEMA_EXCEPTIONS):',
          ...SCHEMA_EXCEPTIONS.map((e) => `  ${describeException(e)}`),
        ].join('\n')
      : '';
    expect(report).toBe('');
  });

  it('every table the migrations create has an entity', async () => {
    const rows: { name: string }[] = await dataSource.query(
      `SELECT relname AS name FROM pg_class
        WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition`,
    );
    const migrationsTable = dataSource.options.migrationsTableName ?? 'migrations';
    const tables = rows.map((r) => r.name).filter((name) => name !== migrationsTable);
    const withEntity = new Set(dataSource.entityMetadatas.map((m) => m.tableName));
    expect(tables.filter((table) => !withEntity.has(table))).toEqual([]);
  });

  it('the entities leave to the migrations exactly what SCHEMA_EXCEPTIONS lists', () => {
    const unsynced = dataSource.entityMetadatas.flatMap((m) => [
      ...(m.synchronize ? [] : [{ table: m.tableName }]),
      ...m.indices.filter((i) => !i.synchronize).map((i) => ({ table: m.tableName, index: i.name })),
    ]);
    const listed = SCHEMA_EXCEPTIONS.map(({ table, index }) => (index ? { table, index } : { table }));
    expect(unsynced).toEqual(expect.arrayContaining(listed));
    expect(listed).toEqual(expect.arrayContaining(unsynced));
  });
});
