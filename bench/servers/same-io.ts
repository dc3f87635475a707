// The hot routes' own I/O and nothing else, on the project's pg, ioredis and bullmq: what every same-I/O server
// makes per request (baseline-io.ts on Nest + Express, baseline-nest-fastify.ts, baseline-floor-http.ts on
// node:http alone), so that they differ only in the HTTP layer around it (docs/internals/benchmarks.md).
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { rateLimitLua } from '../../libs/access/src/rate-limit.lua';
import { PET_COLUMNS } from '@app/catalog';

const ACCOUNT_ID = Number(process.env.BASELINE_ACCOUNT_ID);
const redis = new Redis(process.env.REDIS_URL!, { enableAutoPipelining: true, maxRetriesPerRequest: null });
const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 20),
});
const queue = new Queue('baseline-messages', {
  connection: new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null }),
});
redis.defineCommand('limit', { lua: rateLimitLua({ banStrikes: 5, banMs: 60_000, graceMs: 1_000 }), numberOfKeys: 6 });

/** One limiter-shaped script call per request: both windows, ban and strikes, the usage hash. */
function limit(): Promise<unknown> {
  const k = `baseline:{${ACCOUNT_ID}}`;
  const now = Date.now();
  return (redis as unknown as { limit(...args: (string | number)[]): Promise<unknown> }).limit(
    `${k}:m`,
    `${k}:d`,
    `${k}:ban`,
    `${k}:strikes`,
    `${k}:refused`,
    `${k}:usage`,
    1e9,
    1e9,
    '1',
    'consume',
    now,
  );
}

const GET_PET = `SELECT ${PET_COLUMNS} FROM pets p WHERE p.account_id = $1 AND p.id = $2`;
const LIST_PETS = `SELECT ${PET_COLUMNS} FROM pets p WHERE (p.account_id, p.id) > ($1, $2) AND p.account_id <= $1
  ORDER BY p.account_id, p.id LIMIT $3`;
const INSERT_MESSAGE = `WITH m AS (
    INSERT INTO messages (id, account_id, message, status, attempts, created_at) VALUES ($1, $2, $3, 'queued', 0, now())
  ) INSERT INTO outbox (queue, job_name, job_id, payload) VALUES ('baseline-messages', 'message.process', $1, $4::jsonb)`;

/** A row as pg gives it (ids may come as strings), and as answered (numbers). */
export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}
const view = (p: Pet): Pet => ({
  id: Number(p.id),
  name: p.name,
  categoryId: Number(p.categoryId),
  status: p.status,
});

/** GET /pets/{id}: the limiter call, then the pet by primary key (a named statement). */
export async function getPet(id: string): Promise<Pet> {
  await limit();
  const { rows } = await pool.query<Pet>({ name: 'get-pet', text: GET_PET, values: [ACCOUNT_ID, id] });
  return view(rows[0]);
}

/** GET /pets?limit=n: the limiter call, then the first page (n + 1 rows, as the API asks for). */
export async function listPets(n: number): Promise<Pet[]> {
  await limit();
  const { rows } = await pool.query<Pet>({ name: 'list-pets', text: LIST_PETS, values: [ACCOUNT_ID, 0, n + 1] });
  return rows.slice(0, n).map(view);
}

/** POST /messages: the limiter call, the message + outbox INSERT in one statement, one queue add. */
export async function acceptMessage(message: string): Promise<object> {
  await limit();
  const id = `msg_${randomBytes(14).toString('hex')}`;
  const payload = { accountId: ACCOUNT_ID, messageId: id };
  await pool.query({
    name: 'insert-message',
    text: INSERT_MESSAGE,
    values: [id, ACCOUNT_ID, message, JSON.stringify(payload)],
  });
  await queue.add('message.process', payload, { jobId: id, removeOnComplete: true });
  return { id, message, status: 'queued', createdAt: new Date().toISOString() };
}
