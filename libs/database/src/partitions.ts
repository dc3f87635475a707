import { DataSource, EntityManager } from 'typeorm';

// `message-id`: `msg_` + 12 hex digits of ms, compared byte by byte. `time-ordered-id`: a sequence the job moves up
// to `period start ms × TIME_ORDERED_ID_SCALE` when a period begins, so ids keep insertion order, stay below 2^53
// and fall in their period's partition. `timestamp`: a timestamptz column (docs/storage.md).
export type PartitionKeyKind = 'message-id' | 'time-ordered-id' | 'timestamp';

export interface HistoryTable {
  table: string;
  column: string;
  key: PartitionKeyKind;
  sequence?: string;
}

/** Room for 1,024 ids per ms before time-ordered ids run ahead of the clock. */
export const TIME_ORDERED_ID_SCALE = 1024;

/** `fromMs`/`toMs` bound the times the partition's key encodes (±Infinity: open). */
export interface HistoryPartition {
  name: string;
  fromMs: number;
  toMs: number;
}

type Db = DataSource | EntityManager;
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function keyLiteral(key: PartitionKeyKind, ms: number): string {
  if (key === 'message-id') return `'msg_${ms.toString(16).padStart(12, '0')}'`;
  if (key === 'time-ordered-id') return String(ms * TIME_ORDERED_ID_SCALE);
  return `'${new Date(ms).toISOString()}'`;
}

/** `bound`: pg_get_expr's text of it, quotes removed. */
function boundMs(key: PartitionKeyKind, bound: string): number {
  if (bound === 'MINVALUE') return -Infinity;
  if (bound === 'MAXVALUE') return Infinity;
  if (key === 'message-id') return parseInt(bound.slice(4, 16), 16);
  if (key === 'time-ordered-id') return Number(bound) / TIME_ORDERED_ID_SCALE;
  return Date.parse(bound.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
}

/** `messages_p20251130t000000`: the table and the UTC start of the partition's period. */
export function partitionName(table: string, fromMs: number): string {
  const stamp = new Date(fromMs).toISOString().replace(/[-:]/g, '').slice(0, 15).toLowerCase();
  return `${table}_p${stamp}`;
}

/** Oldest first; the default partition is not one of them. */
export async function historyPartitions(db: Db, h: HistoryTable): Promise<HistoryPartition[]> {
  const rows: { name: string; bound: string }[] = await db.query(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass`,
    [h.table],
  );
  const parts: HistoryPartition[] = [];
  for (const { name, bound } of rows) {
    const m = /^FOR VALUES FROM \('?([^']*)'?\) TO \('?([^']*)'?\)$/.exec(bound);
    if (m) parts.push({ name, fromMs: boundMs(h.key, m[1]), toMs: boundMs(h.key, m[2]) });
  }
  return parts.sort((a, b) => a.fromMs - b.fromMs);
}

// A DDL waits at most `lockTimeoutMs` for its locks, so no queue of statements builds behind it; a run that gives up
// leaves the rest to the next one.
export async function createPartitionsAhead(
  db: DataSource,
  h: HistoryTable,
  opts: { widthMs: number; ahead: number; nowMs: number; lockTimeoutMs: number },
): Promise<string[]> {
  const { widthMs, nowMs } = opts;
  const current = Math.floor(nowMs / widthMs) * widthMs;
  const until = current + (opts.ahead + 1) * widthMs;
  const bounds = (await historyPartitions(db, h)).map((p) => p.toMs).filter((ms) => ms < Infinity);
  let from = bounds.length ? Math.max(...bounds) : current;
  const created: string[] = [];
  // A gap since the newest partition (the migration's, or an outage): one partition covers it.
  if (from < current) {
    created.push(await createPartition(db, h, from, current, opts.lockTimeoutMs));
    from = current;
  }
  while (from < until) {
    const to = (Math.floor(from / widthMs) + 1) * widthMs;
    created.push(await createPartition(db, h, from, to, opts.lockTimeoutMs));
    from = to;
  }
  if (h.sequence) {
    const floor = current * TIME_ORDERED_ID_SCALE;
    await db.query(`SELECT setval($1::regclass, $2) FROM ${ident(h.sequence)} WHERE last_value < $2`, [
      h.sequence,
      floor,
    ]);
  }
  return created;
}

// Rows of its range already in the default partition (the worker was down longer than the partitions made ahead)
// move in within the same transaction, which holds the table for as long as the move takes.
async function createPartition(db: DataSource, h: HistoryTable, fromMs: number, toMs: number, lockTimeoutMs: number) {
  const name = partitionName(h.table, fromMs);
  const range = `FROM (${keyLiteral(h.key, fromMs)}) TO (${keyLiteral(h.key, toMs)})`;
  const create = `CREATE TABLE IF NOT EXISTS ${ident(name)} PARTITION OF ${ident(h.table)} FOR VALUES ${range}`;
  await db.transaction(async (m) => {
    await m.query(`SELECT set_config('lock_timeout', $1, true)`, [String(lockTimeoutMs)]);
    await m.query('SAVEPOINT create_partition');
    try {
      await m.query(create);
    } catch (err) {
      // 23514: rows in the default partition belong to the new range.
      if (sqlState(err) !== '23514') throw err;
      await m.query('ROLLBACK TO SAVEPOINT create_partition');
      await rescueFromDefault(m, h, name, create, fromMs, toMs);
    }
  });
  return name;
}

async function rescueFromDefault(
  m: EntityManager,
  h: HistoryTable,
  name: string,
  create: string,
  fromMs: number,
  toMs: number,
): Promise<void> {
  const def = ident(`${h.table}_default`);
  const key = ident(h.column);
  const inRange = `${key} >= ${keyLiteral(h.key, fromMs)} AND ${key} < ${keyLiteral(h.key, toMs)}`;
  await m.query(`ALTER TABLE ${ident(h.table)} DETACH PARTITION ${def}`);
  await m.query(create);
  await m.query(
    `WITH moved AS (DELETE FROM ${def} WHERE ${inRange} RETURNING *) INSERT INTO ${ident(name)} SELECT * FROM moved`,
  );
  await m.query(`ALTER TABLE ${ident(h.table)} ATTACH PARTITION ${def} DEFAULT`);
}

export async function dropPartition(db: DataSource, h: HistoryTable, name: string, lockTimeoutMs: number) {
  await db.transaction(async (m) => {
    await m.query(`SELECT set_config('lock_timeout', $1, true)`, [String(lockTimeoutMs)]);
    await m.query(`ALTER TABLE ${ident(h.table)} DETACH PARTITION ${ident(name)}`);
    await m.query(`DROP TABLE ${ident(name)}`);
  });
}

export function isLockTimeout(err: unknown): boolean {
  return sqlState(err) === '55P03';
}

/** TypeORM's QueryFailedError carries the driver's fields. */
const sqlState = (err: unknown) => (err as { code?: string } | null)?.code;
