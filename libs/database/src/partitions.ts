import { DataSource, EntityManager } from 'typeorm';

/**
 * How a history table's partition key encodes time (docs/storage.md):
 * - `message-id`: `msg_` + 12 hex digits of milliseconds (newMessageId), compared byte by byte;
 * - `time-ordered-id`: a bigint from a sequence that the partition job moves up to
 *   `period start in ms × 1024` when a period begins (TIME_ORDERED_ID_SCALE), so ids still
 *   follow insertion order, stay below 2^53, and a period's ids fall in its partition;
 * - `timestamp`: the key is a timestamptz column.
 */
export type PartitionKeyKind = 'message-id' | 'time-ordered-id' | 'timestamp';

/** A time-partitioned history table: its name, its key's kind and, for time-ordered ids, their sequence. */
export interface HistoryTable {
  table: string;
  /** The partition key column. */
  column: string;
  key: PartitionKeyKind;
  sequence?: string;
}

/** Ids per millisecond of a time-ordered id: room for 1,024 per ms before ids run ahead of the clock. */
export const TIME_ORDERED_ID_SCALE = 1024;

/** One partition of a history table; `fromMs`/`toMs` bound the times its key encodes (±Infinity: open). */
export interface HistoryPartition {
  name: string;
  fromMs: number;
  toMs: number;
}

type Db = DataSource | EntityManager;
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The partition key's value at time `ms`, as an SQL literal. */
export function keyLiteral(key: PartitionKeyKind, ms: number): string {
  if (key === 'message-id') return `'msg_${ms.toString(16).padStart(12, '0')}'`;
  if (key === 'time-ordered-id') return String(ms * TIME_ORDERED_ID_SCALE);
  return `'${new Date(ms).toISOString()}'`;
}

/** The time a bound of the partition key encodes (pg_get_expr's text of it, quotes removed). */
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

/** The table's range partitions, oldest first (the default partition is not one of them). */
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

/**
 * Creates the partitions that cover from the current period to `ahead` periods after it, each
 * `widthMs` wide and aligned to it (the first one after an existing partition may be shorter), and
 * moves a time-ordered id sequence up to the current period. Answers the partitions created.
 * A DDL waits at most `lockTimeoutMs` for its locks, so it never holds a queue of statements
 * behind it; a run that gives up leaves the rest to the next one.
 */
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

/**
 * One partition [fromMs, toMs). Rows of its range already in the default partition (written while
 * no partition covered them: the worker was down longer than the partitions made ahead) are moved
 * into it in the same transaction, which then holds the table for as long as the move takes.
 */
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

/** The default partition's rows of [fromMs, toMs) into a new partition of that range. */
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

/** Detaches the partition and drops it, in one short transaction that waits at most `lockTimeoutMs` for its locks. */
export async function dropPartition(db: DataSource, h: HistoryTable, name: string, lockTimeoutMs: number) {
  await db.transaction(async (m) => {
    await m.query(`SELECT set_config('lock_timeout', $1, true)`, [String(lockTimeoutMs)]);
    await m.query(`ALTER TABLE ${ident(h.table)} DETACH PARTITION ${ident(name)}`);
    await m.query(`DROP TABLE ${ident(name)}`);
  });
}

/** A partition DDL that gave up waiting for its locks (lock_timeout): the next run tries again. */
export function isLockTimeout(err: unknown): boolean {
  return sqlState(err) === '55P03';
}

/** The SQLSTATE of a failed query (TypeORM's QueryFailedError carries the driver's fields). */
const sqlState = (err: unknown) => (err as { code?: string } | null)?.code;
