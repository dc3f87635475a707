import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CatalogModule } from '@app/catalog';
import { SCHEMA_EXCEPTIONS, SchemaException } from '@app/database';
import { MessagesModule } from '@app/messages';
import { StoreModule } from '@app/store';
import { UsageModule } from '@app/usage';
import { WebhooksModule } from '@app/webhooks';
import { featureModules } from './feature-modules';

/** A partial index's predicate as both sides spell it, without the parentheses, casts and spaces Postgres adds. */
const predicate = (where: string | null | undefined) =>
  where ? where.replace(/::[a-z ]+/g, '').replace(/[()\s]/g, '').toLowerCase() : null;

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

  // TypeORM's diff compares an index's column set, not its order nor its WHERE.
  it("every index an entity declares has the migration's columns in order and its WHERE", async () => {
    const rows: { table: string; name: string; columns: string[]; where: string | null }[] = await dataSource.query(
      `SELECT t.relname AS table, i.relname AS name, pg_get_expr(ix.indpred, ix.indrelid) AS where,
              array(SELECT a.attname FROM unnest(ix.indkey::int2[]) WITH ORDINALITY k(attnum, n)
                    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
         FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
        WHERE t.relnamespace = current_schema()::regnamespace`,
    );
    const declared = dataSource.entityMetadatas
      .filter((m) => m.synchronize)
      .flatMap((m) => m.indices.filter((i) => i.synchronize).map((i) => ({ table: m.tableName, index: i })));
    const inDatabase = (table: string, name: string) => rows.find((r) => r.table === table && r.name === name);
    expect(
      declared.map(({ table, index }) => {
        const found = inDatabase(table, index.name);
        return { table, name: index.name, columns: found?.columns, where: predicate(found?.where) };
      }),
    ).toEqual(
      declared.map(({ table, index }) => ({
        table,
        name: index.name,
        columns: index.columns.map((c) => c.databaseName),
        where: predicate(index.where),
      })),
    );
  });

  const unsynced = () =>
    dataSource.entityMetadatas.flatMap((m) => [
      ...(m.synchronize ? [] : [{ table: m.tableName }]),
      ...m.indices.filter((i) => !i.synchronize).map((i) => ({ table: m.tableName, index: i.name })),
    ]);

  it.each(SCHEMA_EXCEPTIONS.map((e) => [describeException(e), e] as const))(
    'left to the migrations, and its entity says so: %s',
    (_, { table, index }) => {
      expect(unsynced()).toContainEqual(index ? { table, index } : { table });
    },
  );

  it('every table or index an entity leaves to the migrations is listed in SCHEMA_EXCEPTIONS', () => {
    const listed = SCHEMA_EXCEPTIONS.map(({ table, index }) => (index ? { table, index } : { table }));
    expect(listed).toEqual(expect.arrayContaining(unsynced()));
  });
});
