// bench:data's partitioned-history section: `messages` as the product keeps it (range partitions
// of PARTITION_WIDTH_SECONDS, retention by dropping the oldest) against an unpartitioned copy
// with today's-before-issue-35 retention (DELETE in batches of 1,000, commit 82dcaa4), same rows,
// same database, one run (docs/internals/benchmarks.md, "Data-scale bench").
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import {
  feedPage,
  createPartitionsAhead,
  dataSourceOptions,
  dropPartition,
  FeedOrder,
  HistoryTable,
  historyPartitions,
  preparedQuery,
  raw,
  sql,
} from '@app/database';
import { MESSAGE_COLUMNS } from '@app/messages';
import { percentile } from './paced';
import { cpuMs } from './proc';

export interface HistoryOptions {
  databaseUrl: string;
  rows: number;
  widthSeconds: number;
  retentionHours: number;
  accounts: number;
  log: (msg: string) => void;
}

const MESSAGES: HistoryTable = { table: 'messages', column: 'id', key: 'message-id' };
const BASELINE = 'messages_unpartitioned';

// The retention statement before partitioning (libs/messages/src/messages.retention.ts at 82dcaa4),
// on the copy; the job ran it with a limit of 1,000 until a batch came back short. Rows by ctid, as today's
// retentionQueries.batchRemove does: with the key (account_id, id), no index finds a row by its id alone.
const batchDelete = (keepDays: number, limit: number) => sql`WITH gone AS (
    DELETE FROM ${raw(BASELINE)} WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM ${raw(BASELINE)}
       WHERE status IN ('processed', 'failed') AND created_at < now() - make_interval(secs => ${keepDays}::double precision * 86400)
       ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED))
    RETURNING account_id, id),
  counters AS (
    DELETE FROM event_sequences s USING gone
     WHERE s.account_id = gone.account_id AND s.resource_type = 'message' AND s.resource_id = gone.id)
  SELECT count(*)::int AS removed FROM gone`;
const BATCH = 1_000;

// The indexes of messages at 82dcaa4 (migrations messages, sweep-by-due-time, retention), with today's key in place
// of the id's and the account index it replaces, so both tables answer a page the same way.
const BASELINE_INDEXES = [
  `ALTER TABLE ${BASELINE} ADD PRIMARY KEY (account_id, id)`,
  `CREATE INDEX ${BASELINE}_account_status ON ${BASELINE} (account_id, status, id)`,
  `CREATE INDEX ${BASELINE}_unfinished_due ON ${BASELINE} (created_at, id) WHERE status IN ('queued', 'processing')`,
  `CREATE INDEX ${BASELINE}_finished_age ON ${BASELINE} (created_at) WHERE status IN ('processed', 'failed')`,
];

export interface TableSize {
  heap: number;
  indexes: number;
  partitions: number;
}

/** Heap (with TOAST) and index bytes of each table, summed over its partitions when it has any. */
export async function tableSizes(pool: Pool, tables: string[]): Promise<Record<string, TableSize>> {
  const { rows } = await pool.query(
    `SELECT t AS name, sum(pg_table_size(r))::bigint AS heap, sum(pg_indexes_size(r))::bigint AS indexes,
            count(*) FILTER (WHERE p.isleaf AND p.level > 0)::int AS partitions
       FROM unnest($1::text[]) t LEFT JOIN LATERAL pg_partition_tree(t::regclass) p ON true,
            LATERAL (SELECT coalesce(p.relid, t::regclass) AS r) leaf
      GROUP BY t`,
    [tables],
  );
  return Object.fromEntries(
    rows.map((r: { name: string; heap: string; indexes: string; partitions: number }) => [
      r.name,
      { heap: Number(r.heap), indexes: Number(r.indexes), partitions: r.partitions },
    ]),
  );
}

const WAL_OF_THIS_DATABASE = `SELECT pg_current_wal_flush_lsn() AS until, coalesce(sum(record_length), 0)::bigint AS bytes
    FROM pg_get_wal_records_info($1, pg_current_wal_flush_lsn())
   WHERE block_ref LIKE '%/' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/%'`;

/**
 * What this database's Postgres work costs between two samples: the WAL records that touch its
 * blocks (pg_walinspect; the machine's other databases are not counted) and the CPU of the apps'
 * backends (application_name petstore, /proc/<pid>/stat; one that ended between samples is missed).
 */
export class DatabaseCost {
  private cpu = new Map<number, number>();
  private constructor(
    private readonly pool: Pool,
    private lsn: string,
  ) {}

  static async start(pool: Pool): Promise<DatabaseCost> {
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const cost = new DatabaseCost(pool, (await pool.query(`SELECT pg_current_wal_insert_lsn() AS lsn`)).rows[0].lsn);
    await cost.sample();
    return cost;
  }

  async sample(): Promise<{ walBytes: number; cpuMs: number }> {
    const { rows } = await this.pool.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'petstore'`,
    );
    let cpu = 0;
    for (const { pid } of rows as { pid: number }[]) {
      const now = cpuMs(pid);
      cpu += now - (this.cpu.get(pid) ?? now);
      this.cpu.set(pid, now);
    }
    // pg_walinspect refuses a start at or past the flushed end.
    const [{ ahead }] = (await this.pool.query(`SELECT pg_current_wal_flush_lsn() > $1::pg_lsn AS ahead`, [this.lsn]))
      .rows;
    if (!ahead) return { walBytes: 0, cpuMs: cpu };
    const [{ until, bytes }] = (await this.pool.query(WAL_OF_THIS_DATABASE, [this.lsn])).rows;
    this.lsn = until;
    return { walBytes: Number(bytes), cpuMs: cpu };
  }
}

interface Cost {
  ms: number;
  cpuMs: number;
  walBytes: number;
  rows: number;
}

/** The message of row g (1..rows): ids and times spread evenly from `fromMs`, accounts in turn. */
function messageRow(fromMs: number, stepMs: number, firstAccount: number, accounts: number) {
  const ms = `(${fromMs}::bigint + floor(g * ${stepMs}::double precision)::bigint)`;
  return {
    id: `'msg_' || lpad(to_hex(${ms}), 12, '0') || substr(md5(g::text), 1, 16)`,
    accountId: `${firstAccount} + g % ${accounts}`,
    createdAt: `to_timestamp(${ms} / 1000.0)`,
  };
}

const mb = (bytes: number) => (bytes / 1e6).toLocaleString('en', { maximumFractionDigits: 1 });

export async function partitionedHistory(md: string[], o: HistoryOptions): Promise<void> {
  const widthMs = o.widthSeconds * 1000;
  const keptPartitions = Math.round((o.retentionHours * 3_600_000) / widthMs);
  // One partition past retention (the one the run drops) and the kept ones, each full.
  const fromMs = Math.floor(Date.now() / widthMs) * widthMs - (keptPartitions + 1) * widthMs;
  const spanMs = (keptPartitions + 1) * widthMs;
  const stepMs = spanMs / o.rows;
  const cutoffMs = fromMs + widthMs;
  const pool = new Pool({ connectionString: o.databaseUrl, max: 2 });
  // The retention side runs on one connection: its backend's CPU is the retention's.
  const config = loadConfig({ ...process.env, DATABASE_URL: o.databaseUrl, DEMO_SEED: 'false' });
  const options = dataSourceOptions(config, { poolSize: 1 });
  // Kept open (one backend throughout); no statement timeout: a VACUUM of the copy takes minutes.
  const ds = new DataSource({ ...options, extra: { ...options.extra, statement_timeout: 0, idleTimeoutMillis: 0 } });
  await ds.initialize();
  try {
    const started = Date.now();
    await pool.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    await pool.query(
      `INSERT INTO accounts (name, plan) SELECT 'history tenant ' || g, 'free' FROM generate_series(1, $1::int) g`,
      [o.accounts],
    );
    const [{ first }] = (await pool.query(`SELECT max(id)::int - $1 + 1 AS first FROM accounts`, [o.accounts])).rows;
    // A fresh database's messages are one empty legacy partition: the partitions the job would
    // have made over the span take its place (the product's createPartitionsAhead, from the past).
    await pool.query(`ALTER TABLE messages DETACH PARTITION messages_legacy`);
    await pool.query(`DROP TABLE messages_legacy`);
    await createPartitionsAhead(ds, MESSAGES, {
      widthMs,
      ahead: keptPartitions + 3,
      nowMs: fromMs,
      lockTimeoutMs: 2_000,
    });
    const row = messageRow(fromMs, stepMs, first, o.accounts);
    const chunk = 1_000_000;
    for (let from = 1; from <= o.rows; from += chunk) {
      const to = Math.min(o.rows, from + chunk - 1);
      o.log(`history: messages ${from}-${to} into the partitioned table`);
      await pool.query(
        `INSERT INTO messages (id, account_id, message, status, attempts, characters, sha256, created_at, processed_at)
         SELECT ${row.id}, ${row.accountId}, 'steady load message ' || g, 'processed', 1, 20 + length(g::text),
                md5(g::text) || md5((g + 1)::text), ${row.createdAt}, ${row.createdAt} + interval '50 ms'
           FROM generate_series($1::int, $2::int) g`,
        [from, to],
      );
    }
    await pool.query(`CREATE TABLE ${BASELINE} (LIKE messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    for (const ddl of BASELINE_INDEXES) await pool.query(ddl);
    const parts = await historyPartitions(ds, MESSAGES);
    for (const [i, p] of parts.entries()) {
      if (i % 5 === 0) o.log(`history: copying partition ${i + 1}/${parts.length} into ${BASELINE}`);
      await pool.query(`INSERT INTO ${BASELINE} SELECT * FROM "${p.name}"`);
    }
    o.log('history: VACUUM ANALYZE both');
    await pool.query(`VACUUM ANALYZE messages, ${BASELINE}`);
    const loadS = Math.round((Date.now() - started) / 1000);
    const before = await tableSizes(pool, ['messages', BASELINE]);

    const reads = await readLatencies(pool, o, row);

    const measured = async (what: () => Promise<number>): Promise<Cost> => {
      await ds.query('CHECKPOINT');
      const [{ lsn, pid }] = await ds.query(`SELECT pg_current_wal_insert_lsn() AS lsn, pg_backend_pid() AS pid`);
      const [cpu0, t0] = [cpuMs(pid), Date.now()];
      const rows = await what();
      const [cpu1, t1] = [cpuMs(pid), Date.now()];
      const [{ bytes }] = (await pool.query(WAL_OF_THIS_DATABASE, [lsn])).rows;
      return { ms: t1 - t0, cpuMs: cpu1 - cpu0, walBytes: Number(bytes), rows };
    };

    o.log('history: retention by dropping the expired partition');
    const expired = (await historyPartitions(ds, MESSAGES)).filter((p) => p.toMs <= cutoffMs);
    const counts = await Promise.all(
      expired.map(async (p) => Number((await pool.query(`SELECT count(*) AS n FROM "${p.name}"`)).rows[0].n)),
    );
    // RetentionService.dropExpired for messages: no open row, the event counters, then detach and drop.
    const drop = await measured(async () => {
      for (const p of expired) {
        const [open] = await ds.query(`SELECT 1 FROM "${p.name}" WHERE status IN ('queued', 'processing') LIMIT 1`);
        if (open) throw new Error(`${p.name} has open rows`);
        await ds.query(`DELETE FROM event_sequences s USING "${p.name}" m
          WHERE s.account_id = m.account_id AND s.resource_type = 'message' AND s.resource_id = m.id`);
        await dropPartition(ds, MESSAGES, p.name, 2_000);
      }
      return counts.reduce((a, b) => a + b, 0);
    });
    o.log(`history: dropped ${drop.rows} rows in ${drop.ms} ms`);

    o.log('history: retention by DELETE batches (baseline)');
    const deletes = await measured(async () => {
      let total = 0;
      for (;;) {
        const keepDays = (Date.now() - cutoffMs) / 86_400_000;
        const [{ removed }] = await preparedQuery<{ removed: number }>(ds, batchDelete(keepDays, BATCH));
        total += removed;
        if (removed < BATCH) return total;
      }
    });
    o.log(`history: deleted ${deletes.rows} rows in ${deletes.ms} ms`);
    const deletedSizes = await tableSizes(pool, [BASELINE]);
    // Autovacuum's share of the deletes (off on this machine's Postgres): in this backend, not in parallel workers.
    const vacuum = await measured(async () => {
      await ds.query(`VACUUM (PARALLEL 0) ${BASELINE}`);
      return deletes.rows;
    });
    const after = await tableSizes(pool, ['messages', BASELINE]);

    const rate = o.rows / (spanMs / 1000);
    const perRow = (x: number, rows: number) => (rows ? x / rows : 0);
    const costRow = (name: string, c: Cost) =>
      `| ${name} | ${c.rows.toLocaleString('en')} | ${(c.ms / 1000).toFixed(2)} | ${(c.cpuMs / 1000).toFixed(2)} | ${mb(c.walBytes)} | ${perRow(c.cpuMs * 1000, c.rows).toFixed(2)} | ${perRow(c.walBytes, c.rows).toFixed(1)} |`;
    const sizeRow = (name: string, s: TableSize, rows: number) =>
      `| ${name} | ${s.partitions || '-'} | ${mb(s.heap)} | ${mb(s.indexes)} | ${mb(s.heap + s.indexes)} | ${((s.heap + s.indexes) / rows).toFixed(0)} |`;
    const kept = o.rows - drop.rows;
    md.push(
      '',
      `## Partitioned history: ${o.rows.toLocaleString('en')} messages, ${o.widthSeconds / 60}-minute partitions, against batch deletes`,
      '',
      `\`messages\` holds ${o.rows.toLocaleString('en')} processed messages written at a steady ${Math.round(rate)}/s over ` +
        `${keptPartitions + 1} partitions of ${o.widthSeconds} s, for ${o.accounts} accounts (ids and times as the API makes them, ` +
        `set-based INSERT ... SELECT generate_series; loaded, copied and vacuumed in ${loadS} s). Retention keeps ${o.retentionHours} h, ` +
        `so one partition has expired. **Baseline**: \`${BASELINE}\`, a plain table with the same rows and the indexes \`messages\` ` +
        `had before partitioning (commit 82dcaa4, with \`messages_finished_age\`; its key is today's, \`(account_id, id)\`), emptied by that commit's retention statement ` +
        `(DELETE of 1,000 rows with their event counters, repeated until a batch comes back short; the job spread it over 20 s runs).`,
      '',
      '### Retention cost',
      '',
      '| retention | rows removed | duration s | Postgres CPU s | WAL MB | CPU µs/row | WAL bytes/row |',
      '|---|---|---|---|---|---|---|',
      costRow('drop the expired partition (product: check open rows, delete event counters, DETACH + DROP)', drop),
      costRow('baseline: DELETE batches of 1,000', deletes),
      costRow('baseline: the VACUUM the deletes leave (autovacuum)', vacuum),
      '',
      'CPU: user + system time of the one Postgres backend that ran it (`/proc/<pid>/stat`). WAL: the records that touch this ' +
        "database's blocks between the start and the end (`pg_walinspect`), after a `CHECKPOINT`, so each page's first change " +
        "writes its full image as it would long after the rows were written; the machine's other databases' WAL is not counted.",
      '',
      '### Table and index sizes',
      '',
      '| table | partitions | heap MB | indexes MB | total MB | bytes/row |',
      '|---|---|---|---|---|---|',
      sizeRow(`messages, ${o.rows.toLocaleString('en')} rows`, before.messages, o.rows),
      sizeRow(`${BASELINE}, ${o.rows.toLocaleString('en')} rows`, before[BASELINE], o.rows),
      sizeRow(`messages after the drop (${kept.toLocaleString('en')} rows)`, after.messages, kept),
      sizeRow(`${BASELINE} after the deletes`, deletedSizes[BASELINE], o.rows - deletes.rows),
      sizeRow(`${BASELINE} after VACUUM`, after[BASELINE], o.rows - deletes.rows),
      '',
      "Summed over partitions (`pg_partition_tree`); heap includes TOAST. The copy's space stays allocated after the " +
        'deletes and the vacuum: it is reused by later inserts, not returned.',
      '',
      `### Reads at ${o.rows.toLocaleString('en')} rows (before retention)`,
      '',
      `The API's statements (\`MessagesService.get\` and \`.list\`, first page of 20) as named prepared statements on one ` +
        `connection, ${reads.rounds} paired rounds of ${reads.perRound} reads per kind and table (order alternating), random ` +
        `messages and accounts, client round-trip time:`,
      '',
      '| read | messages p50 ms | messages p99 ms | unpartitioned p50 ms | unpartitioned p99 ms | p99 ratio, median of rounds (range) |',
      '|---|---|---|---|---|---|',
      ...reads.rows,
    );
  } finally {
    await ds.destroy();
    await pool.end();
  }
}

/** p50/p99 of the API's message reads on both tables, in paired rounds. */
async function readLatencies(
  pool: Pool,
  o: HistoryOptions,
  row: ReturnType<typeof messageRow>,
): Promise<{ rounds: number; perRound: number; rows: string[] }> {
  const rounds = 5;
  const perRound = 400;
  const { rows: sample } = await pool.query(
    `SELECT ${row.id} AS id, ${row.accountId} AS account FROM (SELECT 1 + floor(random() * $1)::int AS g FROM generate_series(1, $2)) s`,
    [o.rows, perRound],
  );
  const kinds: { name: string; statement: (table: string, i: number) => { text: string; values: unknown[] } }[] = [
    {
      name: 'by id (GET /v1/messages/{id})',
      statement: (table, i) => ({
        text: `SELECT ${MESSAGE_COLUMNS('m')} FROM ${table} m WHERE m.id = $1 AND m.account_id = $2`,
        values: [sample[i].id, sample[i].account],
      }),
    },
    ...(['oldest', 'newest'] as FeedOrder[]).map((order) => ({
      name: `account list, ${order} first (GET /v1/messages?limit=20${order === 'newest' ? '&order=newest' : ''})`,
      statement: (table: string, i: number) => {
        const page = feedPage('m', 'account_id', sample[i].account, order, undefined);
        const q = sql`SELECT ${raw(MESSAGE_COLUMNS('m'))} FROM ${raw(table)} m WHERE ${page.where} ${page.orderBy} LIMIT ${21}`;
        return { text: q.text, values: q.values as unknown[] };
      },
    })),
  ];
  const client = await pool.connect();
  try {
    const out: string[] = [];
    for (const [k, kind] of kinds.entries()) {
      const times: Record<string, number[][]> = { messages: [], [BASELINE]: [] };
      for (let round = -1; round < rounds; round++) {
        const order = round % 2 === 0 ? ['messages', BASELINE] : [BASELINE, 'messages'];
        for (const table of order) {
          const ts: number[] = [];
          for (let i = 0; i < perRound; i++) {
            const { text, values } = kind.statement(table, i);
            const t0 = process.hrtime.bigint();
            await client.query({ name: `h${k}-${table}`, text, values });
            ts.push(Number(process.hrtime.bigint() - t0) / 1e6);
          }
          if (round >= 0) times[table].push(ts); // round -1 warms the caches and the plans
        }
      }
      const all = (t: string) => times[t].flat();
      const ratios = times.messages.map((ts, r) => percentile(ts, 99) / percentile(times[BASELINE][r], 99));
      out.push(
        `| ${kind.name} | ${percentile(all('messages'), 50).toFixed(2)} | ${percentile(all('messages'), 99).toFixed(2)} | ` +
          `${percentile(all(BASELINE), 50).toFixed(2)} | ${percentile(all(BASELINE), 99).toFixed(2)} | ` +
          `${percentile(ratios, 50).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) |`,
      );
      o.log(`history: ${out[out.length - 1]}`);
    }
    return { rounds, perRound, rows: out };
  } finally {
    client.release();
  }
}
