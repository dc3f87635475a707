import { relative } from 'node:path';
import { Client } from 'pg';
import { queryFiles, queryStatements } from '../../scripts/generate-sql';

/** The extended-protocol messages pg's connection sends (its typings still give parse and describe a second argument). */
interface Wire {
  parse(statement: { text: string; types: number[] }): void;
  describe(target: { type: 'S'; name: string }): void;
  sync(): void;
}

/** What Postgres says a statement would return, from Parse and Describe alone: nothing runs, a write writes nothing. */
class Describe {
  columns: string[] | null = null;
  private settle!: { resolve: (columns: string[] | null) => void; reject: (error: Error) => void };
  readonly done = new Promise<string[] | null>((resolve, reject) => (this.settle = { resolve, reject }));

  constructor(private readonly text: string) {}

  submit(connection: Wire): void {
    connection.parse({ text: this.text, types: [] });
    connection.describe({ type: 'S', name: '' });
    connection.sync();
  }

  handleRowDescription(message: { fields: { name: string }[] }): void {
    this.columns = message.fields.map((field) => field.name);
  }

  /** pg's last call for a statement that failed (it drops the query before ReadyForQuery). */
  handleError(error: Error): void {
    this.settle.reject(error);
  }

  handleReadyForQuery(): void {
    this.settle.resolve(this.columns);
  }
}

/** Conditions a caller splices into its own statement (PartitionedHistory.openRows), not statements. */
const CONDITIONS = ['eventQueries.openRows', 'messageQueries.openRows', 'webhookDeliveryQueries.openRows'];

async function describeStatement(client: Client, text: string): Promise<string[] | null> {
  const describe = new Describe(text);
  // pg hands the connection to anything with `submit` (as pg-cursor does) and routes its answers back to it.
  void client.query(describe as never);
  return describe.done;
}

/**
 * Every generated statement (the texts `npm run sql:generate` writes) against the migrated schema: the columns it
 * returns are the ones its row type declares (`.returns(...)`), by name; one that returns no rows declares none.
 */
describe('generated SQL against the migrated schema', () => {
  let client: Client;

  beforeAll(async () => {
    client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
  });
  afterAll(() => client?.end());

  it.each(queryFiles().map((file) => [relative(process.cwd(), file), file]))(
    '%s: each statement returns the columns of its declared row type',
    async (_name, file) => {
      const mismatches: string[] = [];
      for (const { name, statement } of queryStatements(file).filter((s) => !CONDITIONS.includes(s.name))) {
        const returned = await describeStatement(client, statement.text).catch((error: Error) => {
          mismatches.push(`${name}: ${error.message}`);
          return undefined;
        });
        if (returned === undefined) continue;
        const declared = statement.columns ?? null;
        const [got, want] = [returned && [...returned].sort(), declared && [...declared].sort()];
        if (JSON.stringify(got) !== JSON.stringify(want))
          mismatches.push(
            `${name}: returns ${JSON.stringify(returned)}, its row type declares ${JSON.stringify(declared)}`,
          );
      }
      expect(mismatches).toEqual([]);
    },
  );
});
