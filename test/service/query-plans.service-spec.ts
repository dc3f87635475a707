import { Client, QueryConfig } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import { CatalogModule, PetsService } from '@app/catalog';
import { loadConfig } from '@app/config';
import { createPartitionsAhead, FeedOrder, feedPage, raw, sql } from '@app/database';
import { FEATURE_WORKERS } from '@app/features';
import { JobCatalog, PartitionedHistory, retentionQueries } from '@app/jobs';
import { MessagesModule, newMessageId } from '@app/messages';
import { StoreModule } from '@app/store';
import { UsageModule } from '@app/usage';
import { webhookDeliveryQueries, WebhooksModule } from '@app/webhooks';
import { ServiceFactory } from './service.factory';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Subplans Removed'?: number;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** The table itself or one of its partitions (`messages_legacy`, `messages_p20251130t000000`, ...). */
const ofTable = (name: string) => (n: PlanNode) =>
  n['Relation Name'] !== undefined && (n['Relation Name'] === name || n['Relation Name'].startsWith(`${name}_`));

/**
 * The worker's background queries (every lost-job sweep source, every retention source) read
 * through their partial indexes: a regression to a sequential scan, or to reading the finished
 * rows the sweep does not want, fails here on a small seed (bench:data measures them at 10 M).
 * On the partitioned tables they do so in every partition, and reads by id prune to one.
 */
describe('the plans of the sweep and retention queries', () => {
  let factory: ServiceFactory;
  let db: DataSource;
  let accountId: number;
  let neighbour: number;

  const { sweeps, retention } = new JobCatalog(FEATURE_WORKERS);

  /**
   * The generic (or custom) plan of `sql`, executed (inside a transaction rolled back: retention deletes), after
   * `before` in the same transaction.
   */
  async function plan(
    sql: string,
    params: unknown[],
    mode = 'force_generic_plan',
    before?: (runner: QueryRunner) => Promise<unknown>,
  ): Promise<PlanNode[]> {
    const runner = db.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await before?.(runner);
      await runner.query(`SET LOCAL plan_cache_mode = ${mode}`);
      await runner.query(`PREPARE plan_probe AS ${sql}`);
      const literal = params
        .map((p) => (typeof p === 'number' ? String(p) : typeof p === 'string' ? `'${p}'` : 'NULL'))
        .join(', ');
      const [
        {
          'QUERY PLAN': [{ Plan }],
        },
      ] = await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE plan_probe${literal && `(${literal})`}`);
      return nodes(Plan);
    } finally {
      await runner.rollbackTransaction();
      await runner.query('DEALLOCATE ALL');
      await runner.release();
    }
  }

  function expectIndexedAndNarrow(name: string, plan: PlanNode[], maxRows: number) {
    expect(plan.some(ofTable(name))).toBe(true);
    // The source's own table (named like the source): the one that grows with the traffic.
    for (const node of plan.filter(ofTable(name))) {
      const seen = { name, node: node['Node Type'], relation: node['Relation Name'] };
      const read = (node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0);
      // An empty partition (one made ahead, the migration's legacy one on a new database) is scanned for nothing.
      if (read > 0) expect(seen).toEqual({ ...seen, node: expect.not.stringMatching(/^Seq Scan$/) });
      expect({ ...seen, readAtMost: read <= maxRows ? maxRows : read }).toEqual({ ...seen, readAtMost: maxRows });
    }
  }

  beforeAll(async () => {
    factory = await ServiceFactory.start(MessagesModule, WebhooksModule, StoreModule, UsageModule.register('worker'));
    db = factory.db;
    // Hourly partitions from now on (the worker's job makes them; these modules have no worker). Before the
    // account: its events take ids of the current period, not of a gap partition since the template's.
    for (const source of retention)
      if (source.partitioned)
        await createPartitionsAhead(db, source.partitioned, {
          widthMs: 3_600_000,
          ahead: 3,
          nowMs: Date.now(),
          lockTimeoutMs: 2_000,
        });
    accountId = await factory.account();
    neighbour = await factory.account();
    // 20,000 finished messages, fanned-out events and delivered deliveries, older than any
    // retention: what the sweep must not read, and what retention drops with their partitions.
    // The messages' ids are 400 days old, the events' and deliveries' ids those of the current hour.
    await db.query(
      `INSERT INTO messages (id, account_id, message, status, attempts, created_at)
       SELECT 'msg_' || lpad(to_hex($2::bigint + g), 12, '0') || substr(md5(g::text), 1, 16), $1, 'm', 'processed', 1,
              now() - interval '400 days'
         FROM generate_series(1, 20000) g`,
      [accountId, Date.now() - 400 * 86_400_000],
    );
    // And 20,000 of this hour, in the hour's partition.
    await db.query(
      `INSERT INTO messages (id, account_id, message, status, attempts)
       SELECT 'msg_' || lpad(to_hex($2::bigint), 12, '0') || lpad(to_hex(g), 16, '0'), $1, 'm', 'processed', 1
         FROM generate_series(1, 20000) g`,
      [accountId, Date.now()],
    );
    await db.query(
      `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out, created_at)
       SELECT $1, 'pet.created', 'pet', g::text, 1, '{}', true, now() - interval '400 days' FROM generate_series(1, 20000) g`,
      [accountId],
    );
    // And 20,000 events and deliveries with ids from before the partitioned tables' sequences: in the legacy partition.
    await db.query(
      `INSERT INTO events (id, account_id, type, resource_type, resource_id, sequence, data, fanned_out, created_at)
       SELECT g, $1, 'pet.created', 'pet', g::text, 1, '{}', true, now() - interval '400 days' FROM generate_series(1, 20000) g`,
      [accountId],
    );
    // Each processed message has its event's sequence counter.
    await db.query(
      `INSERT INTO event_sequences (account_id, resource_type, resource_id, last)
       SELECT account_id, 'message', id, 1 FROM messages WHERE account_id = $1`,
      [accountId],
    );
    const [{ id: webhookId }] = await db.query(
      `INSERT INTO webhooks (account_id, url, events, secret) VALUES ($1, 'https://plans.example/hook', '{pet.created}', 'v1:x')
       RETURNING id`,
      [accountId],
    );
    await db.query(
      `INSERT INTO webhook_deliveries (webhook_id, account_id, event_type, status, attempts, created_at)
       SELECT $1, $2, 'pet.created', 'delivered', 1, now() - interval '400 days' FROM generate_series(1, 20000)`,
      [webhookId, accountId],
    );
    await db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, account_id, event_type, status, attempts, created_at)
       SELECT g, $1, $2, 'pet.created', 'delivered', 1, now() - interval '400 days' FROM generate_series(1, 20000) g`,
      [webhookId, accountId],
    );
    for (const [table, bucket] of [
      ['usage_minutes', 'minute'],
      ['usage_hours', 'hour'],
    ])
      await db.query(
        `INSERT INTO ${table} (account_id, ${bucket}, key_id, admitted)
         SELECT $1, now() - interval '400 days' - g * interval '1 ${bucket}', 1, 1 FROM generate_series(1, 20000) g`,
        [accountId],
      );
    await db.query('ANALYZE messages, events, event_sequences, webhook_deliveries, usage_minutes, usage_hours');
  });
  afterAll(async () => {
    await db.query(`DELETE FROM messages WHERE account_id = $1`, [accountId]);
    await db.query(`DELETE FROM event_sequences WHERE account_id = $1`, [accountId]);
    await db.query(`DELETE FROM events WHERE account_id = $1`, [accountId]);
    await db.query(`DELETE FROM webhooks WHERE account_id = $1`, [accountId]);
    await db.query(`DELETE FROM usage_minutes WHERE account_id = $1`, [accountId]);
    await db.query(`DELETE FROM usage_hours WHERE account_id = $1`, [accountId]);
    await factory.close();
  });

  it('each sweep source reads only due open rows, through an index', async () => {
    const found = sweeps;
    expect(found.map((s) => s.name).sort()).toEqual(['events', 'messages', 'orders', 'webhook_deliveries']);
    for (const source of found) {
      const due = source.due({ olderThanMs: 30_000, limit: 500, after: null });
      expectIndexedAndNarrow(source.name, await plan(due.text, [...due.values]), 500);
    }
  });

  it('each retention source reads one batch of finished rows, or probes a partition, through an index', async () => {
    const found = retention;
    expect(found.map((s) => s.name).sort()).toEqual([
      'events',
      'messages',
      'usage_hours',
      'usage_minutes',
      'webhook_deliveries',
      'webhook_delivery_attempts',
    ]);
    const config = loadConfig(process.env);
    for (const source of found.filter((s) => s.remove)) {
      const remove = source.remove!({ olderThanDays: source.keepDays(config), limit: 1_000 });
      expectIndexedAndNarrow(source.name, await plan(remove.text, [...remove.values]), 1_000);
    }
    // Before dropping a partition: is a row of it still open, is a row of it younger than the retention.
    for (const { name, partitioned } of found.filter((s) => s.partitioned)) {
      const h = partitioned as PartitionedHistory;
      if (h.openRows) expectIndexedAndNarrow(name, await plan(retentionQueries.openRow(name, h.openRows).text, []), 1);
      // Sent unnamed, so planned with its value: the cutoff of a 30-day retention, past the 20,000 rows of each table.
      if (h.key === 'time-ordered-id') {
        const young = retentionQueries.youngRow(name, Date.now() - 30 * 86_400_000);
        expectIndexedAndNarrow(name, await plan(young.text, [...young.values], 'force_custom_plan'), 1);
      }
    }
  });

  // After a worker outage every account's events wait: an account's page must not walk the others' (quadratic recovery).
  it.each(['force_generic_plan', 'force_custom_plan'])(
    "the pending fan-out's page reads only its account's pending events, through their index (%s)",
    async (mode) => {
      try {
        // The neighbour's 20,000 pending events are older: first in (created_at, id) order over every account.
        await db.query(
          `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out, created_at)
           SELECT a, 'pet.created', 'pet', g::text, 1, '{}', false,
                  CASE WHEN a = $1 THEN now() - interval '1 minute' ELSE now() - interval '1 hour' END
             FROM generate_series(1, 20000) g, unnest(ARRAY[$1, $2]::bigint[]) a WHERE a = $2 OR g <= 150`,
          [accountId, neighbour],
        );
        await db.query('ANALYZE events');
        const byAccount: { relname: string }[] = await db.query(
          `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = to_regclass('events_account_not_fanned_out_due')`,
        );
        const q = webhookDeliveryQueries.fanOutPending(accountId, 100);
        const page = await plan(q.text, [...q.values], mode);
        // The page's scans (the update's are by the primary key): each a partition's piece of the account's index.
        const pending = page.filter((n) => ofTable('events')(n) && n['Index Name']?.endsWith('_pkey') === false);
        expect(pending.length).toBeGreaterThan(0);
        for (const scan of pending) {
          const seen = { index: scan['Index Name'], cond: scan['Index Cond'] };
          const ofTheIndex = byAccount.some((i) => i.relname === scan['Index Name']);
          expect({ ...seen, ofTheIndex }).toEqual({
            ...seen,
            ofTheIndex: true,
            cond: expect.stringContaining('account_id = '),
          });
        }
        expectIndexedAndNarrow('events', page, 100);
      } finally {
        await db.query(`DELETE FROM events WHERE account_id = $1 OR (account_id = $2 AND NOT fanned_out)`, [
          neighbour,
          accountId,
        ]);
      }
    },
  );

  // A partition fills before autovacuum first analyzes it (each new period, a backlog written in seconds): without
  // statistics the planner took the page's partial index for the update, walking every pending event of the account.
  it.each(['force_generic_plan', 'force_custom_plan'])(
    "the pending fan-out marks its page's events by primary key, in a partition not analyzed yet (%s)",
    async (mode) => {
      try {
        await db.query(
          `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out)
           SELECT $1, 'pet.created', 'pet', g::text, 1, '{}', false FROM generate_series(1, 3000) g`,
          [accountId],
        );
        const partitions: { oid: number }[] = await db.query(
          `SELECT DISTINCT tableoid::int AS oid FROM events WHERE account_id = $1 AND NOT fanned_out`,
          [accountId],
        );
        const oids = partitions.map((p) => p.oid);
        // Rolled back with the plan's transaction: no autovacuum can analyze the partition in between.
        const withoutStatistics = async (runner: QueryRunner) => {
          await runner.query(`UPDATE pg_class SET reltuples = -1 WHERE oid = ANY ($1::oid[])`, [oids]);
          await runner.query(`DELETE FROM pg_statistic WHERE starelid = ANY ($1::oid[])`, [oids]);
        };
        const q = webhookDeliveryQueries.fanOutPending(accountId, 100);
        const [update] = (await plan(q.text, [...q.values], mode, withoutStatistics)).filter(
          (n) => n['Node Type'] === 'ModifyTable' && ofTable('events')(n),
        );
        const marked = nodes(update).filter((n) => n['Index Name'] && (n['Actual Rows'] ?? 0) > 0);
        expect(marked.length).toBeGreaterThan(0);
        for (const scan of marked)
          expect({ index: scan['Index Name'] }).toEqual({ index: expect.stringMatching(/_pkey$/) });
      } finally {
        await db.query(`DELETE FROM events WHERE account_id = $1 AND NOT fanned_out`, [accountId]);
      }
    },
  );

  it('reads one message by id in one partition only', async () => {
    const [{ id }] = await db.query(`SELECT id FROM messages WHERE account_id = $1 ORDER BY id DESC LIMIT 1`, [
      accountId,
    ]);
    const read = await plan(`SELECT * FROM messages WHERE id = $1 AND account_id = $2`, [id, accountId]);
    expect(read.filter(ofTable('messages')).map((n) => n['Node Type'])).toEqual(['Index Scan']);
    expect(read.some((n) => (n['Subplans Removed'] ?? 0) > 0)).toBe(true);
    // An id of a period with no partition yet reads the overflow partition alone.
    const future = await plan(`SELECT * FROM messages WHERE id = $1 AND account_id = $2`, [
      newMessageId(Date.now() + 400 * 86_400_000),
      accountId,
    ]);
    expect(future.filter(ofTable('messages')).map((n) => n['Relation Name'])).toEqual(['messages_overflow']);
  });

  // The account's messages, events and deliveries lie in two partitions or more, 20,000 rows in two of them.
  it.each(['force_generic_plan', 'force_custom_plan'])(
    'reads a feed page partition by partition in its order and stops at the one that fills it (%s)',
    async (mode) => {
      const [{ id: webhookId }] = await db.query(`SELECT id FROM webhooks WHERE account_id = $1`, [accountId]);
      const feeds = [
        { table: 'messages', scope: 'account_id', scopeId: accountId },
        { table: 'events', scope: 'account_id', scopeId: accountId },
        { table: 'webhook_deliveries', scope: 'webhook_id', scopeId: webhookId },
      ];
      for (const { table, scope, scopeId } of feeds) {
        const holding: { p: string }[] = await db.query(
          `SELECT DISTINCT tableoid::regclass::text AS p FROM ${table} WHERE ${scope} = $1`,
          [scopeId],
        );
        expect({ table, holding: holding.length }).toEqual({ table, holding: expect.any(Number) });
        expect(holding.length).toBeGreaterThan(1);
        // A cursor 100 or 15,000 rows from either end: its page fills from the partition the cursor is in.
        const cursor = async (order: FeedOrder, depth: number) =>
          (
            await db.query(
              `SELECT id FROM ${table} WHERE ${scope} = $1 ORDER BY id ${order === 'newest' ? 'DESC' : ''} OFFSET ${depth} LIMIT 1`,
              [scopeId],
            )
          )[0].id as string | number;
        for (const [order, after] of [
          ['oldest', undefined],
          ['newest', undefined],
          ['oldest', await cursor('oldest', 100)],
          ['newest', await cursor('newest', 100)],
          ['oldest', await cursor('oldest', 15_000)],
          ['newest', await cursor('newest', 15_000)],
        ] as [FeedOrder, string | number | undefined][]) {
          const page = feedPage('t', scope, scopeId, order, after);
          const q = sql`SELECT t.id FROM ${raw(table)} t WHERE ${page.where} ${page.orderBy} LIMIT ${21}`;
          const nodes = await plan(q.text, [...q.values], mode);
          const seen = { table, order, after };
          expect({ ...seen, appends: nodes.map((n) => n['Node Type']).filter((t) => /Append/.test(t)) }).toEqual({
            ...seen,
            appends: ['Append'],
          });
          const scans = nodes.filter(ofTable(table));
          // Through an index, never a table scan; a generic plan through one that leads with the scope.
          for (const scan of scans)
            expect({ ...seen, scan: scan['Node Type'], cond: scan['Index Cond'] }).toEqual({
              ...seen,
              scan: expect.stringMatching(/^Index (Only )?Scan$/),
              cond: mode === 'force_generic_plan' ? expect.stringContaining(`${scope} = `) : scan['Index Cond'],
            });
          const filled = scans.findIndex((scan) => (scan['Actual Rows'] ?? 0) > 0);
          expect({ ...seen, rows: scans[filled]?.['Actual Rows'] }).toEqual({ ...seen, rows: 21 });
          // The page alone, however deep the cursor: no walk from the partition's start to it.
          const read = scans.reduce((sum, n) => sum + (n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0), 0);
          expect({ ...seen, read }).toEqual({ ...seen, read: 21 });
          const later = scans.slice(filled + 1);
          // The other partition holding the scope's rows is among those never executed.
          expect({ ...seen, neverExecuted: later.map((s) => s['Relation Name']) }).toEqual({
            ...seen,
            neverExecuted: expect.arrayContaining(
              holding.map((h) => h.p).filter((p) => p !== scans[filled]['Relation Name']),
            ),
          });
          expect({ ...seen, loops: later.map((s) => s['Actual Loops']) }).toEqual({
            ...seen,
            loops: later.map(() => 0),
          });
        }
      }
    },
  );
});

/**
 * A name search reads the asking account's matches from the account-scoped trigram index, or, for a substring most names hold, walks the
 * account's pets in id order only as far as the page: planned with its values, as the service
 * sends it (an unnamed statement).
 */
describe('the plans of a pet name search', () => {
  let factory: ServiceFactory;
  let db: DataSource;
  let asking: number;
  let neighbour: number;

  beforeAll(async () => {
    factory = await ServiceFactory.start(CatalogModule);
    db = factory.db;
    asking = await factory.account();
    neighbour = await factory.account();
    await db.query(`INSERT INTO categories (account_id, name) VALUES ($1, 'plans'), ($2, 'plans')`, [
      asking,
      neighbour,
    ]);
    // 20,000 pets each; two of the asking account's hold "needle".
    await db.query(
      `INSERT INTO pets (account_id, category_id, name, status, stock)
       SELECT a.account_id, a.id, CASE WHEN a.account_id = $1 AND g IN (7, 19000) THEN 'needle ' || g ELSE 'pet ' || md5(g::text) END,
              'available', 1
         FROM generate_series(1, 20000) g, categories a WHERE a.account_id IN ($1, $2)`,
      [asking, neighbour],
    );
    // VACUUM moves the new rows from the index's pending list into its tree, as autovacuum would.
    await db.query('VACUUM ANALYZE pets');
  });
  afterAll(async () => {
    await db.query(`DELETE FROM pets WHERE account_id IN ($1, $2)`, [asking, neighbour]);
    await db.query(`DELETE FROM categories WHERE account_id IN ($1, $2)`, [asking, neighbour]);
    await factory.close();
  });

  /** The statement matching `pick` that `call` sends, and its plan executed with its values. */
  async function servicePlan(
    call: (pets: PetsService) => Promise<unknown[]>,
    pick: RegExp,
    mode = 'force_custom_plan',
  ): Promise<{ found: number; plan: PlanNode[] }> {
    // pg's client sees both the named statements (preparedQuery) and TypeORM's unnamed ones.
    const spy = jest.spyOn(Client.prototype, 'query');
    let statement: [string, unknown[]];
    let found: number;
    try {
      found = (await call(factory.get(PetsService))).length;
      statement = spy.mock.calls
        .map(([q, values]) =>
          typeof q === 'string'
            ? ([q, values] as [string, unknown[]])
            : ([(q as QueryConfig).text, (q as QueryConfig).values] as [string, unknown[]]),
        )
        .find(([t]) => pick.test(t))!;
    } finally {
      spy.mockRestore();
    }
    expect(statement).toBeDefined();
    const runner = db.createQueryRunner();
    await runner.connect();
    try {
      await runner.query(`SET plan_cache_mode = ${mode}`);
      await runner.query(`PREPARE search_probe AS ${statement[0]}`);
      const literal = statement[1].map((p) =>
        typeof p === 'number' ? String(p) : `'${String(p).replace(/'/g, "''")}'`,
      );
      const [
        {
          'QUERY PLAN': [{ Plan }],
        },
      ] = await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE search_probe(${literal.join(', ')})`);
      return { found, plan: nodes(Plan) };
    } finally {
      await runner.query('DEALLOCATE search_probe');
      await runner.query('RESET plan_cache_mode');
      await runner.release();
    }
  }
  const searchPlan = (name: string) => servicePlan((pets) => pets.list(asking, { limit: 20, name }), / LIKE /);

  const rowsRead = (plan: PlanNode[]) =>
    plan
      .filter((n) => n['Relation Name'] === 'pets')
      .reduce((sum, n) => sum + (n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0), 0);

  it("a rare substring reads the account's matches from the account-scoped trigram index", async () => {
    const { found, plan } = await searchPlan('needle');
    expect(found).toBe(2);
    const scan = plan.find((n) => n['Index Name'] === 'pets_account_name_trgm');
    expect(scan).toMatchObject({ 'Index Cond': expect.stringMatching(/account_id = .*lower\(name\) ~~/) });
    expect(plan.some((n) => n['Node Type'] === 'Seq Scan')).toBe(false);
    expect(rowsRead(plan)).toBeLessThanOrEqual(10);
  });

  it("a common substring walks the account's pets in id order only as far as the page", async () => {
    const { found, plan } = await searchPlan('pet');
    expect(found).toBe(21); // the page and the one row that says another follows
    expect(plan.some((n) => n['Node Type'] === 'Seq Scan' || n['Index Name'] === 'pets_account_name_trgm')).toBe(false);
    expect(rowsRead(plan)).toBeLessThanOrEqual(100);
  });

  // Postgres costs a walk of the primary key from the start as cheap when the account holds many of
  // the table's rows: on a deep page it reads every row before the cursor (bench: 11.8x the first page).
  it.each(['force_generic_plan', 'force_custom_plan'])(
    "a deep list page reads only the page from the account's index (%s)",
    async (mode) => {
      const [{ id: after }] = await db.query(
        `SELECT id FROM pets WHERE account_id = $1 ORDER BY id OFFSET 19000 LIMIT 1`,
        [asking],
      );
      const { found, plan } = await servicePlan(
        (pets) => pets.list(asking, { limit: 20, after: Number(after) }),
        /FROM pets p WHERE/,
        mode,
      );
      expect(found).toBe(21);
      expect(plan.filter((n) => n['Relation Name'] === 'pets').map((n) => n['Index Name'])).toEqual([
        'pets_account_id',
      ]);
      expect(rowsRead(plan)).toBeLessThanOrEqual(25);
    },
  );
});
