import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/** One environment variable: its name and its rule. Each is named here once, where it sits in AppConfig. */
class Variable<S extends z.ZodType = z.ZodType> {
  constructor(
    readonly name: string,
    readonly schema: S,
  ) {}
}

/** A group of variables read as one value (the Redis cluster: all four, or none). */
class Derived<O = unknown> {
  constructor(
    readonly tree: Tree,
    readonly finish: (values: never, problem: Problem) => O,
  ) {}
}

/** Names the variable, never its value (a URL may carry a password). */
type Problem = (variable: Variable, message: string) => void;

type Tree = { readonly [key: string]: Variable | Derived | Tree };
type Parsed<T> =
  T extends Variable<infer S>
    ? z.output<S>
    : T extends Derived<infer O>
      ? O
      : { readonly [K in keyof T]: Parsed<T[K]> };

const variable = <S extends z.ZodType>(name: string, schema: S) => new Variable(name, schema);
const derived = <T extends Tree, O>(tree: T, finish: (values: Parsed<T>, problem: Problem) => O) =>
  new Derived(tree, finish);

const bool = z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1');
// Zod 4 defaults skip the schema, so a transformed variable defaults to its output (false).

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().nonnegative();
const positiveDays = z.coerce.number().positive().finite();
const list = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

const secretKeys = (rule: () => KeyIdRule, development: () => SecretKey) =>
  z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v !== undefined)
        for (const message of secretKeyProblems(v, rule())) ctx.addIssue({ code: 'custom', message });
    })
    .transform((v) => (v ? parseSecretKeys(v) : [development()]));

const redisClusterVariables = {
  nodes: variable(
    'REDIS_CLUSTER_NODES',
    z
      .string()
      .regex(/^\s*[^\s,:]+:\d+(\s*,\s*[^\s,:]+:\d+)*\s*$/, 'must be a comma-separated list of host:port')
      .optional()
      .transform((v) =>
        list(v).map((node) => {
          const at = node.lastIndexOf(':');
          return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
        }),
      ),
  ),
  username: variable('REDIS_USERNAME', z.string().optional()),
  password: variable('REDIS_PASSWORD', z.string().optional()),
  tls: variable('REDIS_TLS', bool.default(false)),
};

/** One Postgres server of DATABASE_URL. */
export interface DatabaseHost {
  host: string;
  port: number;
}

/** DATABASE_URL read: `url` names one server (the first), `hosts` every one (more than one: follow the primary). */
export interface DatabaseTarget {
  url: string;
  hosts: DatabaseHost[];
}

const POSTGRES_URL = /^(postgres(?:ql)?:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/s;
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/;

/**
 * One host (`postgres://u@db:5432/petstore`, used as it is), or libpq's list of hosts with
 * `target_session_attrs=read-write` (or `primary`), as `pg_autoctl show uri` prints it:
 * `postgres://u@h1:5432,h2:5432/petstore?target_session_attrs=read-write`. node-postgres reads one
 * host: for a list, `url` names the first (without the attribute) and libs/database connects to
 * whichever of `hosts` takes writes now.
 */
function databaseTargetOf(text: string, ctx: z.RefinementCtx): DatabaseTarget {
  const fail = (message: string) => {
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  };
  const [, scheme, user = '', authority = '', rest = ''] = POSTGRES_URL.exec(text) ?? [];
  if (!scheme) return fail('must be a postgres:// URL');
  const hosts = authority.split(',').map((entry) => HOST_PORT.exec(entry));
  if (hosts.length === 1) {
    if (!URL.canParse(text)) return fail('must be a postgres:// URL');
    const url = new URL(text);
    return { url: text, hosts: [{ host: url.hostname, port: Number(url.port || 5432) }] };
  }
  if (hosts.some((h) => !h || Number(h[2] ?? 5432) > 65535)) return fail('must list its hosts as host:port,host:port');
  const first = `${scheme}${user}${authority.split(',')[0]}${rest}`;
  if (!URL.canParse(first)) return fail('must be a postgres:// URL');
  const url = new URL(first);
  const attrs = url.searchParams.get('target_session_attrs');
  if (attrs !== 'read-write' && attrs !== 'primary')
    return fail('with several hosts, must say target_session_attrs=read-write (the service writes)');
  url.searchParams.delete('target_session_attrs');
  return {
    url: url.toString(),
    hosts: hosts.map((h) => ({ host: h![1].replace(/^\[|\]$/g, ''), port: Number(h![2] ?? 5432) })),
  };
}

const databaseUrl = variable(
  'DATABASE_URL',
  z.string().default('postgres://postgres@127.0.0.1:5432/petstore').transform(databaseTargetOf),
);

// Pub/sub ignores the db index and a cluster has only db 0: deployments sharing a Redis are told apart by this.
const REDIS_NAMESPACE = /^[A-Za-z0-9_.-]{1,64}$/;
const redisNamespaceVariables = {
  namespace: variable(
    'REDIS_NAMESPACE',
    z.string().regex(REDIS_NAMESPACE, 'must be 1-64 of [A-Za-z0-9_.-]').optional(),
  ),
  databaseUrl,
};

/** REDIS_NAMESPACE, or the database's name: two deployments never share a database, so they differ by default. */
function redisNamespaceOf({ namespace, databaseUrl }: { namespace?: string; databaseUrl: DatabaseTarget }): string {
  if (namespace) return namespace;
  const name = decodeURIComponent(new URL(databaseUrl.url).pathname.slice(1)).replace(/[^A-Za-z0-9_.-]/g, '_');
  return name.slice(0, 64) || 'petstore';
}

export const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TracesSampler = (typeof TRACES_SAMPLERS)[number];

const tracingSamplerVariables = {
  sampler: variable('OTEL_TRACES_SAMPLER', z.enum(TRACES_SAMPLERS).optional()),
  // Read by the traceidratio samplers only (as the specification says).
  ratio: variable('OTEL_TRACES_SAMPLER_ARG', z.coerce.number().min(0).max(1).optional()),
};

/**
 * Unset: parentbased_always_on, or parentbased_traceidratio when only OTEL_TRACES_SAMPLER_ARG is set
 * (what that variable alone always meant here).
 */
function samplerOf({ sampler, ratio }: { sampler?: TracesSampler; ratio?: number }): {
  sampler: TracesSampler;
  ratio: number;
} {
  return {
    sampler: sampler ?? (ratio === undefined ? 'parentbased_always_on' : 'parentbased_traceidratio'),
    ratio: ratio ?? 1,
  };
}

/** `key=value,key=value`, each part percent-decoded (the OpenTelemetry resource SDK's format). */
function resourceAttributesOf(text: string | undefined, ctx: z.RefinementCtx): Record<string, string> {
  const attributes: Record<string, string> = {};
  const bad: number[] = [];
  (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .forEach((entry, i) => {
      if (!entry) return;
      const at = entry.indexOf('=');
      try {
        const key = decodeURIComponent(entry.slice(0, at).trim());
        if (at <= 0 || !key) throw new Error();
        attributes[key] = decodeURIComponent(entry.slice(at + 1).trim());
      } catch {
        bad.push(i + 1);
      }
    });
  // Never echoed: a value may be private.
  if (bad.length)
    ctx.addIssue({
      code: 'custom',
      message: `must be a comma-separated list of key=value, percent-encoded (entries not understood: ${bad.join(', ')})`,
    });
  return attributes;
}

// Every variable the service reads, where it lands in AppConfig; loadConfig is the only reader of process.env.
const spec = {
  nodeEnv: variable('NODE_ENV', z.enum(['development', 'production', 'test']).default('development')),
  port: variable('PORT', port.default(3000)),
  workerPort: variable('WORKER_PORT', port.default(3001)),
  // The API's /metrics, off the public port (Prometheus's registered default for exporters).
  metricsPort: variable('METRICS_PORT', port.default(9464)),
  // PORT, METRICS_PORT and WORKER_PORT listen on this address only; unset, on every interface.
  bindAddress: variable(
    'BIND_ADDRESS',
    z
      .string()
      .refine(
        (v) => ipaddr.IPv4.isValidFourPartDecimal(v) || ipaddr.IPv6.isValid(v),
        'must be an IPv4 or IPv6 address (0.0.0.0 or :: for every interface)',
      )
      .optional(),
  ),
  /** The first (or only) server of DATABASE_URL, as one URL. */
  databaseUrl: derived({ target: databaseUrl }, ({ target }) => target.url),
  /** Every server of DATABASE_URL: more than one, and the pools connect to whichever takes writes now. */
  databaseHosts: derived({ target: databaseUrl }, ({ target }) => target.hosts),
  databasePoolSize: variable('DATABASE_POOL_SIZE', positiveInt.default(20)),
  // A worker waits on Redis and webhook receivers far more than on Postgres.
  workerDatabasePoolSize: variable('WORKER_DATABASE_POOL_SIZE', positiveInt.default(5)),
  /** Longest a statement may run; the pool holds it per connection, or per transaction behind a pooler. */
  databaseStatementTimeoutMs: variable('DATABASE_STATEMENT_TIMEOUT_MS', positiveInt.default(10_000)),
  // PgBouncer (or another pooler) in transaction mode: no session state, no named statements.
  databaseTransactionPooler: variable('DATABASE_TRANSACTION_POOLER', bool.default(false)),
  databaseReplicaUrls: variable(
    'DATABASE_REPLICA_URLS',
    z
      .string()
      .refine(
        (v) => v.split(',').every((u) => /^postgres(ql)?:\/\/\S+$/.test(u.trim())),
        'must be a comma-separated list of postgres:// URLs',
      )
      .optional()
      .transform(list),
  ),
  databaseReplicaMaxLagMs: variable('DATABASE_REPLICA_MAX_LAG_MS', positiveInt.default(1_000)),
  redisUrl: variable(
    'REDIS_URL',
    z
      .url()
      .refine((u) => /^rediss?:\/\//.test(u), 'must be a redis:// URL')
      .default('redis://127.0.0.1:6379'),
  ),
  // Set: every Redis client is a Redis Cluster client seeded with these nodes (REDIS_URL unused).
  redisCluster: derived(redisClusterVariables, (cluster, problem): RedisClusterConfig | undefined => {
    if (cluster.nodes.length) return cluster;
    for (const name of ['username', 'password', 'tls'] as const)
      if (cluster[name])
        problem(
          redisClusterVariables[name],
          `only with ${redisClusterVariables.nodes.name} (a single node takes it from ${spec.redisUrl.name})`,
        );
    return undefined;
  }),
  /** Starts every Redis key and channel of this deployment (libs/redis RedisNamespace). */
  redisNamespace: derived(redisNamespaceVariables, redisNamespaceOf),
  logLevel: variable(
    'LOG_LEVEL',
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
  logFile: variable('LOG_FILE', z.string().optional()),
  // pretty: one readable line per entry, for a terminal (scripts/start.mjs sets it); json for collectors.
  logFormat: variable('LOG_FORMAT', z.enum(['json', 'pretty']).default('json')),
  // true (or 1) trusts the one proxy in front of us; N trusts N hops; a list trusts the peers in
  // it. Never "all": the left-most X-Forwarded-For entry is whatever the client wrote (limiter evasion).
  trustProxy: variable('TRUST_PROXY', z.string().transform(trustProxyOf).default(0)),
  corsOrigins: variable('CORS_ORIGINS', z.string().optional().transform(list)),
  bodyLimitBytes: variable('BODY_LIMIT_BYTES', positiveInt.default(100 * 1024)),
  shutdownGraceMs: variable('SHUTDOWN_GRACE_MS', positiveInt.default(10_000)),
  petGetSunsetAt: variable(
    'PET_GET_SUNSET_AT',
    z.iso
      .datetime({ offset: true })
      .default('2027-06-30T00:00:00Z')
      .transform((at) => new Date(at)),
  ),
  rateLimit: {
    banStrikes: variable('RATE_LIMIT_BAN_STRIKES', positiveInt.default(10)),
    banSeconds: variable('RATE_LIMIT_BAN_SECONDS', positiveInt.default(900)),
  },
  // At most 7 days, as a grace asked for over the API (MAX_ROTATION_GRACE_SECONDS in libs/access).
  keyRotationGraceSeconds: variable('KEY_ROTATION_GRACE_SECONDS', nonNegativeInt.max(604_800).default(86_400)),
  authCacheTtlMs: variable('AUTH_CACHE_TTL_MS', positiveInt.default(60_000)),
  authLookup: {
    concurrency: variable('AUTH_LOOKUP_CONCURRENCY', positiveInt.default(16)),
    ratePerSecond: variable('AUTH_LOOKUP_RATE', positiveInt.default(500)),
  },
  apiKeyTagKeys: variable(
    'API_KEY_TAG_KEYS',
    secretKeys(
      () => TAG_KEY_ID,
      () => DEVELOPMENT_TAG_KEY,
    ),
  ),
  outbox: {
    relayIntervalMs: variable('OUTBOX_RELAY_INTERVAL_MS', positiveInt.default(1_000)),
    relayGraceMs: variable('OUTBOX_RELAY_GRACE_MS', nonNegativeInt.default(5_000)),
  },
  jobs: {
    attempts: variable('JOB_ATTEMPTS', positiveInt.default(5)),
    backoffMs: variable('JOB_BACKOFF_MS', positiveInt.default(1_000)),
    /** A crashed worker's jobs run again within about twice this (BullMQ lock and stalled check). */
    lockMs: variable('JOB_LOCK_MS', positiveInt.default(30_000)),
    concurrency: variable('WORKER_CONCURRENCY', positiveInt.default(10)),
    sweepIntervalMs: variable('SWEEP_INTERVAL_MS', positiveInt.default(30_000)),
    batchSize: variable('WORKER_BATCH_SIZE', positiveInt.default(100)),
    // Unset: every queue. A worker Deployment per group lets webhooks scale apart from messages.
    queues: variable(
      'WORKER_QUEUES',
      z
        .string()
        .regex(/^\s*[a-z-]+(\s*,\s*[a-z-]+)*\s*$/, 'must be a comma-separated list of queue names')
        .optional()
        .transform((v) => v?.split(',').map((q) => q.trim())),
    ),
    stallMs: variable('WORKER_STALL_MS', positiveInt.default(120_000)),
  },
  webhooks: {
    timeoutMs: variable('WEBHOOK_TIMEOUT_MS', positiveInt.default(10_000)),
    backoffMs: variable('WEBHOOK_BACKOFF_MS', positiveInt.default(30_000)),
    maxAgeSeconds: variable('WEBHOOK_MAX_AGE_SECONDS', positiveInt.default(3 * 24 * 3600)),
    allowPrivateUrls: variable('ALLOW_PRIVATE_WEBHOOK_URLS', bool.default(false)),
    accountConcurrency: variable('WEBHOOK_ACCOUNT_CONCURRENCY', positiveInt.default(4)),
    // Deliveries wait on receivers (up to WEBHOOK_TIMEOUT_MS each), not on this process's CPU.
    concurrency: variable('WEBHOOK_CONCURRENCY', positiveInt.default(100)),
    legacySignatureUntil: variable(
      'WEBHOOK_LEGACY_SIGNATURE_UNTIL',
      z.coerce.date().default(new Date('2027-06-01T00:00:00Z')),
    ),
  },
  /** Orders, accounts, keys and webhooks are kept for ever. */
  retention: {
    messagesDays: variable('RETENTION_MESSAGES_DAYS', positiveDays.default(30)),
    eventsDays: variable('RETENTION_EVENTS_DAYS', positiveDays.default(30)),
    webhookDeliveriesDays: variable('RETENTION_WEBHOOK_DELIVERIES_DAYS', positiveDays.default(30)),
    usageMinutesDays: variable('RETENTION_USAGE_MINUTES_DAYS', positiveDays.default(2)),
    usageHoursDays: variable('RETENTION_USAGE_HOURS_DAYS', positiveDays.default(90)),
    intervalMs: variable('RETENTION_INTERVAL_MS', positiveInt.default(60_000)),
    /** History tables are partitioned by time (docs/storage.md): one partition's width, and how many are made ahead. */
    partitionWidthMs: variable(
      'PARTITION_WIDTH_SECONDS',
      positiveInt.default(86_400).transform((seconds) => seconds * 1000),
    ),
    partitionsAhead: variable('PARTITIONS_AHEAD', positiveInt.default(2)),
  },
  usageAggregationIntervalMs: variable('USAGE_AGGREGATION_INTERVAL_MS', positiveInt.default(60_000)),
  // GET /v1/events/stream: a comment this often keeps proxies from closing an idle stream.
  eventStreamHeartbeatMs: variable('EVENT_STREAM_HEARTBEAT_MS', positiveInt.default(15_000)),
  /** One account's name searches per API process: at once, and their share of the clock (libs/catalog AccountSlots). */
  nameSearchSlots: {
    concurrency: variable('NAME_SEARCH_ACCOUNT_CONCURRENCY', positiveInt.default(1)),
    // Of the clock, per API process: one tenant's sustained searches leave the rest of a core to others.
    share: variable('NAME_SEARCH_ACCOUNT_SHARE', z.coerce.number().positive().max(1).default(0.25)),
    burstMs: variable('NAME_SEARCH_ACCOUNT_BURST_MS', nonNegativeInt.default(1000)),
  },
  demoSeed: variable('DEMO_SEED', bool.default(true)),
  // Unset: no queue dashboard. Long enough that guessing it over the network is hopeless.
  queueDashboardToken: variable(
    'QUEUE_DASHBOARD_TOKEN',
    z.string().min(24, 'must be at least 24 characters').optional(),
  ),
  /**
   * The standard OpenTelemetry variables. `endpoint` undefined: tracing off. `serviceName` undefined:
   * OTEL_RESOURCE_ATTRIBUTES's service.name, else petstore-<app>.
   */
  tracing: {
    endpoint: variable('OTEL_EXPORTER_OTLP_ENDPOINT', z.url().optional()),
    serviceName: variable('OTEL_SERVICE_NAME', z.string().optional()),
    resourceAttributes: variable('OTEL_RESOURCE_ATTRIBUTES', z.string().optional().transform(resourceAttributesOf)),
    exportDelayMs: variable('OTEL_BSP_SCHEDULE_DELAY', positiveInt.default(5_000)),
    sampling: derived(tracingSamplerVariables, samplerOf),
  },
  webhookSecretKeys: variable(
    'WEBHOOK_SECRET_KEYS',
    secretKeys(
      () => SECRET_KEY_ID,
      () => DEVELOPMENT_SECRET_KEY,
    ),
  ),
};

type ConfigValues = Parsed<typeof spec>;

// Rules across variables, on the parsed config.
function crossChecks(c: ConfigValues, problem: Problem): void {
  const { retention, webhooks } = spec;
  if (c.retention.webhookDeliveriesDays > c.retention.eventsDays)
    problem(
      retention.webhookDeliveriesDays,
      `must not exceed ${retention.eventsDays.name} (deliveries go with their event)`,
    );
  if (c.retention.eventsDays * 86_400 <= c.webhooks.maxAgeSeconds)
    problem(
      retention.eventsDays,
      `must be longer than ${webhooks.maxAgeSeconds.name} (an event outlives its deliveries' retries)`,
    );
  // Retention drops whole partitions: a shorter retention would keep rows for a partition's width anyway.
  const widthSeconds = c.retention.partitionWidthMs / 1000;
  for (const name of ['messagesDays', 'eventsDays', 'webhookDeliveriesDays', 'usageMinutesDays'] as const)
    if (c.retention[name] * 86_400 < widthSeconds)
      problem(
        retention[name],
        `must be at least one partition (${retention.partitionWidthMs.name}=${widthSeconds}): retention drops whole partitions`,
      );
  if (c.retention.partitionWidthMs * c.retention.partitionsAhead <= c.retention.intervalMs)
    problem(
      retention.partitionsAhead,
      `must cover more than ${retention.intervalMs.name} (the job that creates partitions ahead runs that often)`,
    );
  // Production never runs on the public development keys.
  if (c.nodeEnv === 'production') {
    if (c.webhookSecretKeys[0] === DEVELOPMENT_SECRET_KEY)
      problem(spec.webhookSecretKeys, 'required when NODE_ENV=production');
    if (c.apiKeyTagKeys[0] === DEVELOPMENT_TAG_KEY) problem(spec.apiKeyTagKeys, 'required when NODE_ENV=production');
  }
}

function variablesOf(node: Variable | Derived | Tree): Variable[] {
  if (node instanceof Variable) return [node];
  return Object.values(node instanceof Derived ? node.tree : node).flatMap(variablesOf);
}

function valuesOf(node: Variable | Derived | Tree, flat: Record<string, unknown>, problem: Problem): unknown {
  if (node instanceof Variable) return flat[node.name];
  if (node instanceof Derived) return node.finish(valuesOf(node.tree, flat, problem) as never, problem);
  return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, valuesOf(child, flat, problem)]));
}

// DATABASE_URL is read twice (its own value, and the Redis namespace's default).
const VARIABLES = [...new Set(variablesOf(spec))];

// The one schema: each variable's rule, then the grouped AppConfig and the rules across variables.
const schema = z.object(Object.fromEntries(VARIABLES.map((v) => [v.name, v.schema]))).transform((flat, ctx) => {
  const problem: Problem = (v, message) => ctx.addIssue({ code: 'custom', path: [v.name], message });
  const values = valuesOf(spec, flat, problem) as ConfigValues;
  crossChecks(values, problem);
  return new AppConfig(values);
});

// Dotted-decimal IPv4 or IPv6, optional /prefix: what Express's proxy-addr accepts.
function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const bits = ipaddr.IPv4.isValidFourPartDecimal(address) ? 32 : ipaddr.IPv6.isValid(address) ? 128 : 0;
  if (!bits || rest.length) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
}

// Bad entries are named by position, never echoed.
function trustProxyOf(text: string, ctx: z.RefinementCtx): number | string[] {
  const v = text.trim();
  if (v === 'false') return 0;
  if (v === 'true') return 1;
  if (/^\d+$/.test(v)) return Number(v);
  const entries = v.split(',').map((entry) => entry.trim());
  const bad = entries.flatMap((entry, i) => (isAddressOrCidr(entry) ? [] : [i + 1]));
  if (bad.length) {
    ctx.addIssue({
      code: 'custom',
      message: `must be true, false, a number of proxy hops or a comma-separated list of IP addresses and CIDRs (entries not understood: ${bad.join(', ')})`,
    });
    return z.NEVER;
  }
  return entries;
}

/** `id` is written beside each ciphertext (or inside each tagged API key). */
export interface SecretKey {
  id: string;
  key: Buffer;
}

interface KeyIdRule {
  pattern: RegExp;
  says: string;
}
const SECRET_KEY_ID: KeyIdRule = { pattern: /^[A-Za-z0-9_-]{1,32}$/, says: '1-32 of [A-Za-z0-9_-]' };
// Written inside every API key it tags, hence two characters.
const TAG_KEY_ID: KeyIdRule = { pattern: /^[A-Za-z0-9]{2}$/, says: '2 of [A-Za-z0-9]' };

function parseSecretKeys(text: string): SecretKey[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.indexOf(':');
      return { id: entry.slice(0, at), key: Buffer.from(entry.slice(at + 1), 'base64') };
    });
}

// Never echoes key material.
function secretKeyProblems(text: string, rule: KeyIdRule): string[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (!entries.length) return ['must hold at least one id:base64key entry'];
  const problems: string[] = [];
  const ids = new Set<string>();
  entries.forEach((entry, i) => {
    const at = entry.indexOf(':');
    const id = at > 0 ? entry.slice(0, at) : '';
    if (!rule.pattern.test(id)) problems.push(`entry ${i + 1}: the id must be ${rule.says} followed by ":"`);
    else if (ids.has(id)) problems.push(`entry ${i + 1}: duplicate id ${id}`);
    ids.add(id);
    const encoded = entry.slice(at + 1);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || Buffer.from(encoded, 'base64').length !== 32)
      problems.push(`entry ${i + 1}${rule.pattern.test(id) ? ` (${id})` : ''}: the key must be 32 bytes in base64`);
  });
  return problems;
}

// Public on purpose, for development only: production refuses to start without real keys.
export const DEVELOPMENT_SECRET_KEY: SecretKey = {
  id: 'dev',
  key: createHash('sha256').update('petstore development webhook secret key (public)').digest(),
};

export const DEVELOPMENT_TAG_KEY: SecretKey = {
  id: 'dv',
  key: createHash('sha256').update('petstore development API key tag key (public)').digest(),
};

export interface RedisClusterConfig {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging -- the fields come from `spec`
export interface AppConfig extends ConfigValues {}

/** The validated configuration of the process (the Nest provider token); its shape is `spec`'s. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- the fields come from `spec`
export class AppConfig {
  constructor(values: ConfigValues) {
    Object.assign(this, values);
  }
}

export class ConfigError extends Error {}

export const CONFIG_VARIABLES = VARIABLES.map((v) => v.name);

// One line naming each bad variable, never its value (a URL may carry a password). Without
// `source`, a `.env` file fills in what the environment leaves unset.
export function loadConfig(source?: Record<string, string | undefined>): AppConfig {
  if (!source && existsSync('.env')) process.loadEnvFile('.env');
  const env = source ?? process.env;
  const parsed = schema.safeParse(
    Object.fromEntries(CONFIG_VARIABLES.map((k) => [k, env[k] === '' ? undefined : env[k]])),
  );
  if (!parsed.success) {
    const byVariable = new Map<string, string[]>();
    for (const i of parsed.error.issues)
      byVariable.set(i.path.join('.'), [...(byVariable.get(i.path.join('.')) ?? []), i.message]);
    const problems = [...byVariable].map(([name, messages]) => `${name}: ${messages.join(', ')}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}
