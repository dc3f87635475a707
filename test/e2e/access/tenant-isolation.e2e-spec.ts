import { Client, QueryConfig } from 'pg';
import { DataSource } from 'typeorm';
import { HttpClient } from '../../support/http';
import { createAccount, RunningApi, startApi } from '../../support/test-apps';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/**
 * A tenant's list requests cost the same behind a tenant with 20,000 rows per table as alone:
 * each list statement, under the plan Postgres runs it with (the generic plan a prepared statement settles on;
 * a name search, sent unnamed, is planned with its values), reads only the
 * asking account's rows (no primary-key walk through every tenant, no sequential scan).
 */
describe('tenant isolation of list queries', () => {
  let api: RunningApi;
  let db: DataSource;
  let admin: Client;

  beforeAll(async () => {
    api = await startApi();
    db = api.app.get(DataSource);
    admin = new Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    await api.close();
  });

  /** The statements the API sends while `fn` runs (preparedQuery's text and values). */
  async function statementsDuring(fn: () => Promise<unknown>): Promise<QueryConfig[]> {
    const spy = jest.spyOn(Client.prototype, 'query');
    try {
      await fn();
      // preparedQuery sends a config object; a name search sends its text and values unnamed.
      return spy.mock.calls
        .map(([config, values]) =>
          typeof config === 'string'
            ? { text: config, values: values as unknown[] }
            : (config as unknown as QueryConfig),
        )
        .filter((c) => typeof c === 'object' && c.text);
    } finally {
      spy.mockRestore();
    }
  }

  /**
   * The plan Postgres runs `statement` with, executed for real: generic once a named statement
   * settles on it, custom (planned with the values) for an unnamed one.
   */
  async function runningPlan(statement: QueryConfig): Promise<PlanNode[]> {
    const literal = (v: unknown) => (typeof v === 'number' ? String(v) : admin.escapeLiteral(String(v)));
    await admin.query(`SET plan_cache_mode = ${statement.name ? 'force_generic_plan' : 'force_custom_plan'}`);
    await admin.query(`PREPARE isolation_probe AS ${statement.text}`);
    try {
      const [{ 'QUERY PLAN': plan }] = (
        await admin.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE isolation_probe(${(statement.values ?? []).map(literal).join(', ')})`,
        )
      ).rows;
      return nodes(plan[0].Plan);
    } finally {
      await admin.query('DEALLOCATE isolation_probe');
    }
  }

  it('reads only the asking tenant’s rows for pets, inventory, orders, messages and events', async () => {
    const big = await createAccount(api);
    const small = await createAccount(api);
    await db.query(`INSERT INTO categories (account_id, name) VALUES ($1, 'big'), ($2, 'small')`, [
      big.accountId,
      small.accountId,
    ]);
    await db.query(
      `INSERT INTO pets (account_id, category_id, name, status, stock)
       SELECT a.id, c.id, 'pet ' || md5(g::text), 'available', 1
         FROM generate_series(1, 20000) g, accounts a JOIN categories c ON c.account_id = a.id WHERE a.id = $1`,
      [big.accountId],
    );
    await db.query(
      `INSERT INTO pets (account_id, category_id, name, status, stock)
       SELECT a.id, c.id, 'small ' || g, 'available', 1
         FROM generate_series(1, 5) g, accounts a JOIN categories c ON c.account_id = a.id WHERE a.id = $1`,
      [small.accountId],
    );
    await db.query(
      `INSERT INTO orders (account_id, pet_id, quantity, complete)
       SELECT $1, (SELECT min(id) FROM pets WHERE account_id = $1), 1, true FROM generate_series(1, 20000)`,
      [big.accountId],
    );
    await db.query(
      `INSERT INTO messages (id, account_id, message, status, attempts, created_at)
       SELECT 'msg_' || substr(md5(random()::text || g::text), 1, 28), $1, 'm', 'processed', 1, now()
         FROM generate_series(1, 20000) g`,
      [big.accountId],
    );
    await db.query(
      `INSERT INTO events (account_id, type, resource_type, resource_id, sequence, data, fanned_out)
       SELECT $1, 'pet.created', 'pet', g::text, 1, '{}', true FROM generate_series(1, 20000) g`,
      [big.accountId],
    );
    await admin.query('ANALYZE pets, orders, messages, events');

    const http = new HttpClient(api.url, small.apiKey);
    for (const path of [
      '/v1/pets?limit=20',
      '/v1/pets?limit=20&name=zzz',
      '/v1/store/inventory?limit=20',
      '/v1/store/orders?limit=20',
      '/v1/messages?limit=20',
      '/v1/events?limit=20',
    ]) {
      const statements = await statementsDuring(async () => expect((await http.get(path)).status).toBe(200));
      const list = statements.find(
        (s) => / LIMIT \$\d+\b/.test(s.text) && /\bFROM (pets|orders|messages|events) /.test(s.text),
      );
      expect(list).toBeDefined();
      const plan = await runningPlan(list!);
      // No sequential scan and no index walked without account_id (both read every tenant's rows); each
      // table read through the tenant's part of an index that leads with it, so its handful of rows.
      for (const node of plan) {
        const seen = { path, node: node['Node Type'], index: node['Index Name'], cond: node['Index Cond'] };
        expect(seen).toEqual({ ...seen, node: expect.not.stringMatching(/^Seq Scan$/) });
        if (node['Index Name']) expect(seen).toEqual({ ...seen, cond: expect.stringMatching(/\baccount_id\b/) });
        if (node['Relation Name'])
          expect((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)).toBeLessThan(100);
      }
    }
  });
});
