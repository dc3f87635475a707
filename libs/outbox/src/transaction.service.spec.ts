import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { dataSourceOptions, migrate } from '@app/database';
import { OutboxService } from './outbox.service';
import { TransactionService } from './transaction.service';

/**
 * Against the real Postgres (its own database): concurrent transactions emitting events for
 * the same resource get consecutive sequence numbers, none fails.
 */
describe('TransactionService.emit sequence numbers', () => {
  const config = loadConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/petstore_test_unit_events' });
  let ds: DataSource;
  let tx: TransactionService;

  beforeAll(async () => {
    await migrate(config);
    ds = await new DataSource(dataSourceOptions(config, { poolSize: 12 })).initialize();
    // Dispatch is out of scope here: no Redis, so the staged rows stay in the outbox.
    const outbox = {
      stage: OutboxService.prototype.stage,
      dispatch: async () => undefined,
    } as unknown as OutboxService;
    tx = new TransactionService(ds, outbox);
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
});
