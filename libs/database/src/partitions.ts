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

type Db = Pick<EntityManager, 'query'>;
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function keyLiteral(key: PartitionKeyKind, ms: number): string {
  if (key === 'message-id') return `'msg_${ms.toString(16).padStart(12, '0')}'`;
  if (key === 'time-ordered-id') return String(ms * TIME_ORDERED_ID_SCALE);
  return `'${new Date(ms).toISOString()}'`;
}

/** ±Infinity: MINVALUE / MAXVALUE. */
export function partitionBound(key: PartitionKeyKind, fromMs: number, toMs: number): string {
  const literal = (ms: number) => (ms === -Infinity ? 'MINVALUE' : ms === Infinity ? 'MAXVALUE' : keyLiteral(key, ms));
  return `FOR VALUES FROM (${literal(fromMs)}) TO (${literal(toMs)})`;
}

/** `bound`: pg_get_expr's text of it, quotes removed. */
function boundMs(key: PartitionKeyKind, bound: string): number {
  if (bound === 'MINVALUE') return -Infinity;
  if (bound === 'MAXVALUE') return Infinity;
  if (key === 'message-id') return parseInt(bound.slice(4, 16), 16);
  if (key === 'time-ordered-id') return Number(bound) / TIME_ORDERED_ID_SCALE;
  return Date.parse(bound.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
}

export function partitionName(table: string, fromMs: number): string {
  const stamp = new Date(fromMs).toISOString().replace(/[-:]/g, '').slice(0, 15).toLowerCase();
  return `${table}_p${stamp}`;
}

/** Every key after the newest period's; the job splits each new period off it. */
export const overflowName = (table: string) => `${table}_overflow`;

/** Where retention dropped periods, empty: a row with a key that old still has a partition. */
export function expiredName(table: string, fromMs: number): string {
  return fromMs === -Infinity ? `${table}_expired` : partitionName(`${table}_expired`, fromMs);
}

const isPeriod = (h: HistoryTable, p: HistoryPartition) =>
  p.name !== overflowName(h.table) && !p.name.startsWith(`${h.table}_expired`);

/** Oldest first; together they cover every key, MINVALUE to MAXVALUE. */
export async function rangePartitions(db: Db, h: HistoryTable): Promise<HistoryPartition[]> {
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

/** The periods, oldest first: what retention may drop. */
export async function historyPartitions(db: Db, h: HistoryTable): Promise<HistoryPartition[]> {
  return (await rangePartitions(db, h)).filter((p) => isPeriod(h, p));
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
  const ends = (await rangePartitions(db, h)).map((p) => p.toMs).filter((ms) => ms < Infinity);
  let from = ends.length ? Math.max(...ends) : current;
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

// Split off the overflow: its rows of the range (the worker was down longer than the partitions made ahead) move in
// within the same transaction, which holds the table for as long as the move takes.
async function createPartition(db: DataSource, h: HistoryTable, fromMs: number, toMs: number, lockTimeoutMs: number) {
  const name = partitionName(h.table, fromMs);
  const create = `CREATE TABLE IF NOT EXISTS ${ident(name)} PARTITION OF ${ident(h.table)} ${partitionBound(h.key, fromMs, toMs)}`;
  await db.transaction(async (m) => {
    await lockForDdl(m, h, lockTimeoutMs);
    const overflow = (await rangePartitions(m, h)).find((p) => p.name === overflowName(h.table));
    if (!overflow || overflow.fromMs >= toMs) {
      await m.query(create);
      return;
    }
    const [table, over, key] = [ident(h.table), ident(overflow.name), ident(h.column)];
    await m.query(`ALTER TABLE ${table} DETACH PARTITION ${over}`);
    await m.query(create);
    await m.query(
      `WITH moved AS (DELETE FROM ${over} WHERE ${key} < ${keyLiteral(h.key, toMs)} RETURNING *)
       INSERT INTO ${ident(name)} SELECT * FROM moved`,
    );
    await m.query(`ALTER TABLE ${table} ATTACH PARTITION ${over} ${partitionBound(h.key, toMs, Infinity)}`);
  });
  return name;
}

// The range joins the expired partitions beside it in one, so no key is left without a partition; rows written
// there since (keys older than the retention) are kept.
export async function dropPartition(db: DataSource, h: HistoryTable, name: string, lockTimeoutMs: number) {
  await db.transaction(async (m) => {
    await lockForDdl(m, h, lockTimeoutMs);
    const parts = await rangePartitions(m, h);
    const at = parts.findIndex((p) => p.name === name);
    if (at < 0) throw new Error(`${name} is not a partition of ${h.table}`);
    let [lo, hi] = [at, at];
    while (lo > 0 && !isPeriod(h, parts[lo - 1])) lo--;
    while (hi < parts.length - 1 && !isPeriod(h, parts[hi + 1]) && parts[hi + 1].toMs < Infinity) hi++;
    const merged = parts.slice(lo, hi + 1);
    const [table, bound] = [ident(h.table), partitionBound(h.key, merged[0].fromMs, merged[merged.length - 1].toMs)];
    for (const p of merged) await m.query(`ALTER TABLE ${table} DETACH PARTITION ${ident(p.name)}`);
    // The lowest expired partition takes the whole range back; otherwise a new one does.
    const kept = lo < at ? merged[0] : undefined;
    const target = ident(kept?.name ?? expiredName(h.table, merged[0].fromMs));
    if (!kept) await m.query(`CREATE TABLE ${target} PARTITION OF ${table} ${bound}`);
    for (const p of merged.filter((p) => p !== kept)) {
      if (p.name !== name) await m.query(`INSERT INTO ${target} SELECT * FROM ${ident(p.name)}`);
      await m.query(`DROP TABLE ${ident(p.name)}`);
    }
    if (kept) await m.query(`ALTER TABLE ${table} ATTACH PARTITION ${target} ${bound}`);
  });
}

/** Taken first, so that the ranges read next stay true (another worker's run may have just split the overflow). */
async function lockForDdl(m: EntityManager, h: HistoryTable, lockTimeoutMs: number): Promise<void> {
  await m.query(`SELECT set_config('lock_timeout', $1, true)`, [String(lockTimeoutMs)]);
  await m.query(`LOCK TABLE ${ident(h.table)} IN ACCESS EXCLUSIVE MODE`);
}

/** A partition DDL that gave up waiting for its locks (lock_timeout): the next run tries again. */
export function isLockTimeout(err: unknown): boolean {
  return sqlState(err) === '55P03';
}

/** The SQLSTATE of a failed query (TypeORM's QueryFailedError carries the driver's fields). */
const sqlState = (err: unknown) => (err as { code?: string } | null)?.code;
