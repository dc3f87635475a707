import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1');
// Zod 4 defaults skip the schema, so a transformed variable defaults to its output (false).

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().nonnegative();
const positiveDays = z.coerce.number().positive().finite();

const keyList = (rule: () => KeyIdRule) =>
  z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      if (v !== undefined)
        for (const message of secretKeyProblems(v, rule())) ctx.addIssue({ code: 'custom', message });
    });

// Every variable the service reads; loadConfig is the only reader of process.env.
const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  // The API's /metrics, off the public port (Prometheus's registered default for exporters).
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  DATABASE_URL: z
    .url()
    .refine((u) => /^postgres(ql)?:\/\//.test(u), 'must be a postgres:// URL')
    .default('postgres://postgres@127.0.0.1:5432/petstore'),
  DATABASE_POOL_SIZE: positiveInt.default(20),
  // A worker waits on Redis and webhook receivers far more than on Postgres.
  WORKER_DATABASE_POOL_SIZE: positiveInt.default(5),
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt.default(10_000),
  // PgBouncer (or another pooler) in transaction mode: no session state, no named statements.
  DATABASE_TRANSACTION_POOLER: bool.default(false),
  DATABASE_REPLICA_URLS: z
    .string()
    .refine(
      (v) => v.split(',').every((u) => /^postgres(ql)?:\/\/\S+$/.test(u.trim())),
      'must be a comma-separated list of postgres:// URLs',
    )
    .optional(),
  DATABASE_REPLICA_MAX_LAG_MS: positiveInt.default(1_000),
  REDIS_URL: z
    .url()
    .refine((u) => /^rediss?:\/\//.test(u), 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379'),
  // Set: every Redis client is a Redis Cluster client seeded with these nodes (REDIS_URL unused).
  REDIS_CLUSTER_NODES: z
    .string()
    .regex(/^\s*[^\s,:]+:\d+(\s*,\s*[^\s,:]+:\d+)*\s*$/, 'must be a comma-separated list of host:port')
    .optional(),
  REDIS_USERNAME: z.string().optional(),
  REDIS_PASSWORD: z.string().optional(),
  REDIS_TLS: bool.default(false),
  LOG_FILE: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // pretty: one readable line per entry, for a terminal (scripts/start.mjs sets it); json for collectors.
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  // true (or 1) trusts the one proxy in front of us; N trusts N hops; a list trusts the peers in
  // it. Never "all": the left-most X-Forwarded-For entry is whatever the client wrote (limiter evasion).
  TRUST_PROXY: z.string().transform(trustProxyOf).default(0),
  CORS_ORIGINS: z.string().default(''),
  BODY_LIMIT_BYTES: positiveInt.default(100 * 1024),
  SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
  PET_GET_SUNSET_AT: z.iso.datetime({ offset: true }).default('2027-06-30T00:00:00Z'),
  RATE_LIMIT_BAN_STRIKES: positiveInt.default(10),
  RATE_LIMIT_BAN_SECONDS: positiveInt.default(900),
  // At most 7 days, as a grace asked for over the API (MAX_ROTATION_GRACE_SECONDS in libs/access).
  KEY_ROTATION_GRACE_SECONDS: nonNegativeInt.max(604_800).default(86_400),
  AUTH_CACHE_TTL_MS: positiveInt.default(60_000),
  AUTH_LOOKUP_CONCURRENCY: positiveInt.default(16),
  AUTH_LOOKUP_RATE: positiveInt.default(500),
  API_KEY_TAG_KEYS: keyList(() => TAG_KEY_ID),
  OUTBOX_RELAY_INTERVAL_MS: positiveInt.default(1_000),
  OUTBOX_RELAY_GRACE_MS: nonNegativeInt.default(5_000),
  JOB_ATTEMPTS: positiveInt.default(5),
  JOB_BACKOFF_MS: positiveInt.default(1_000),
  JOB_LOCK_MS: positiveInt.default(30_000),
  SWEEP_INTERVAL_MS: positiveInt.default(30_000),
  WORKER_STALL_MS: positiveInt.default(120_000),
  WORKER_CONCURRENCY: positiveInt.default(10),
  WORKER_BATCH_SIZE: positiveInt.default(100),
  // Unset: every queue. A worker Deployment per group lets webhooks scale apart from messages.
  WORKER_QUEUES: z
    .string()
    .regex(/^\s*[a-z-]+(\s*,\s*[a-z-]+)*\s*$/, 'must be a comma-separated list of queue names')
    .optional(),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  WEBHOOK_BACKOFF_MS: positiveInt.default(30_000),
  WEBHOOK_MAX_AGE_SECONDS: positiveInt.default(3 * 24 * 3600),
  ALLOW_PRIVATE_WEBHOOK_URLS: bool.default(false),
  WEBHOOK_ACCOUNT_CONCURRENCY: positiveInt.default(4),
  // Deliveries wait on receivers (up to WEBHOOK_TIMEOUT_MS each), not on this process's CPU.
  WEBHOOK_CONCURRENCY: positiveInt.default(100),
  WEBHOOK_LEGACY_SIGNATURE_UNTIL: z.coerce.date().default(new Date('2027-06-01T00:00:00Z')),
  RETENTION_MESSAGES_DAYS: positiveDays.default(30),
  RETENTION_EVENTS_DAYS: positiveDays.default(30),
  RETENTION_WEBHOOK_DELIVERIES_DAYS: positiveDays.default(30),
  RETENTION_INTERVAL_MS: positiveInt.default(60_000),
  // History tables are partitioned by time (docs/storage.md); partitions are created this many periods ahead.
  PARTITION_WIDTH_SECONDS: positiveInt.default(86_400),
  PARTITIONS_AHEAD: positiveInt.default(2),
  NAME_SEARCH_ACCOUNT_CONCURRENCY: positiveInt.default(1),
  // Of the clock, per API process: one tenant's sustained searches leave the rest of a core to others.
  NAME_SEARCH_ACCOUNT_SHARE: z.coerce.number().positive().max(1).default(0.25),
  NAME_SEARCH_ACCOUNT_BURST_MS: nonNegativeInt.default(1000),
  RETENTION_USAGE_MINUTES_DAYS: positiveDays.default(2),
  RETENTION_USAGE_HOURS_DAYS: positiveDays.default(90),
  USAGE_AGGREGATION_INTERVAL_MS: positiveInt.default(60_000),
  // GET /v1/events/stream: a comment this often keeps proxies from closing an idle stream.
  EVENT_STREAM_HEARTBEAT_MS: positiveInt.default(15_000),
  DEMO_SEED: bool.default(true),
  // Unset: no queue dashboard. Long enough that guessing it over the network is hopeless.
  QUEUE_DASHBOARD_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_SERVICE_NAME: z.string().optional(),
  OTEL_BSP_SCHEDULE_DELAY: positiveInt.default(5_000),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  WEBHOOK_SECRET_KEYS: keyList(() => SECRET_KEY_ID),
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

// Production never runs on the public development keys.
const checked = schema.superRefine((e, ctx) => {
  if (e.RETENTION_WEBHOOK_DELIVERIES_DAYS > e.RETENTION_EVENTS_DAYS)
    ctx.addIssue({
      code: 'custom',
      path: ['RETENTION_WEBHOOK_DELIVERIES_DAYS'],
      message: 'must not exceed RETENTION_EVENTS_DAYS (deliveries go with their event)',
    });
  if (e.RETENTION_EVENTS_DAYS * 86_400 <= e.WEBHOOK_MAX_AGE_SECONDS)
    ctx.addIssue({
      code: 'custom',
      path: ['RETENTION_EVENTS_DAYS'],
      message: "must be longer than WEBHOOK_MAX_AGE_SECONDS (an event outlives its deliveries' retries)",
    });
  // Retention drops whole partitions: a shorter retention would keep rows for a partition's width anyway.
  for (const name of [
    'RETENTION_MESSAGES_DAYS',
    'RETENTION_EVENTS_DAYS',
    'RETENTION_WEBHOOK_DELIVERIES_DAYS',
    'RETENTION_USAGE_MINUTES_DAYS',
  ] as const)
    if (e[name] * 86_400 < e.PARTITION_WIDTH_SECONDS)
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: `must be at least one partition (PARTITION_WIDTH_SECONDS=${e.PARTITION_WIDTH_SECONDS}): retention drops whole partitions`,
      });
  if (e.PARTITION_WIDTH_SECONDS * e.PARTITIONS_AHEAD * 1000 <= e.RETENTION_INTERVAL_MS)
    ctx.addIssue({
      code: 'custom',
      path: ['PARTITIONS_AHEAD'],
      message: 'must cover more than RETENTION_INTERVAL_MS (the job that creates partitions ahead runs that often)',
    });
  for (const name of ['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_TLS'] as const)
    if (e[name] && !e.REDIS_CLUSTER_NODES)
      ctx.addIssue({
        code: 'custom',
        path: [name],
        message: 'only with REDIS_CLUSTER_NODES (a single node takes it from REDIS_URL)',
      });
  for (const name of ['WEBHOOK_SECRET_KEYS', 'API_KEY_TAG_KEYS'] as const)
    if (e.NODE_ENV === 'production' && !e[name])
      ctx.addIssue({ code: 'custom', path: [name], message: 'required when NODE_ENV=production' });
});

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

type Env = z.infer<typeof schema>;

export interface RedisClusterConfig {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

export class AppConfig {
  readonly port: number;
  readonly workerPort: number;
  readonly metricsPort: number;
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  readonly workerDatabasePoolSize: number;
  /** Longest a statement may run; the pool holds it per connection, or per transaction behind a pooler. */
  readonly databaseStatementTimeoutMs: number;
  readonly databaseTransactionPooler: boolean;
  readonly databaseReplicaUrls: string[];
  readonly databaseReplicaMaxLagMs: number;
  readonly redisUrl: string;
  readonly redisCluster?: RedisClusterConfig;
  readonly logLevel: Env['LOG_LEVEL'];
  readonly logFormat: Env['LOG_FORMAT'];
  readonly logFile?: string;
  readonly trustProxy: number | string[];
  readonly corsOrigins: string[];
  readonly bodyLimitBytes: number;
  readonly shutdownGraceMs: number;
  readonly petGetSunsetAt: Date;
  readonly rateLimit: { banStrikes: number; banSeconds: number };
  readonly keyRotationGraceSeconds: number;
  readonly authCacheTtlMs: number;
  readonly authLookup: { concurrency: number; ratePerSecond: number };
  readonly apiKeyTagKeys: SecretKey[];
  readonly outbox: { relayIntervalMs: number; relayGraceMs: number };
  readonly jobs: {
    attempts: number;
    backoffMs: number;
    /** A crashed worker's jobs run again within about twice this (BullMQ lock and stalled check). */
    lockMs: number;
    concurrency: number;
    sweepIntervalMs: number;
    batchSize: number;
    queues?: string[];
    stallMs: number;
  };
  readonly webhooks: {
    timeoutMs: number;
    backoffMs: number;
    maxAgeSeconds: number;
    allowPrivateUrls: boolean;
    accountConcurrency: number;
    concurrency: number;
    legacySignatureUntil: Date;
  };
  /** Orders, accounts, keys and webhooks are kept for ever. */
  readonly retention: {
    messagesDays: number;
    eventsDays: number;
    webhookDeliveriesDays: number;
    usageMinutesDays: number;
    usageHoursDays: number;
    intervalMs: number;
    /** The width of one partition of the history tables, and the periods after the current one created ahead. */
    partitionWidthMs: number;
    partitionsAhead: number;
  };
  readonly usageAggregationIntervalMs: number;
  readonly eventStreamHeartbeatMs: number;
  /** One account's name searches per API process: at once, and their share of the clock (libs/catalog AccountSlots). */
  readonly nameSearchSlots: { concurrency: number; share: number; burstMs: number };
  readonly demoSeed: boolean;
  readonly queueDashboardToken?: string;
  /** `endpoint` undefined: tracing off. `serviceName` undefined: petstore-<app>. */
  readonly tracing: { endpoint?: string; serviceName?: string; exportDelayMs: number; sampleRatio: number };
  readonly webhookSecretKeys: SecretKey[];

  constructor(e: Env) {
    this.port = e.PORT;
    this.workerPort = e.WORKER_PORT;
    this.metricsPort = e.METRICS_PORT;
    this.databaseUrl = e.DATABASE_URL;
    this.databasePoolSize = e.DATABASE_POOL_SIZE;
    this.workerDatabasePoolSize = e.WORKER_DATABASE_POOL_SIZE;
    this.databaseStatementTimeoutMs = e.DATABASE_STATEMENT_TIMEOUT_MS;
    this.databaseTransactionPooler = e.DATABASE_TRANSACTION_POOLER;
    this.databaseReplicaUrls = (e.DATABASE_REPLICA_URLS ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    this.databaseReplicaMaxLagMs = e.DATABASE_REPLICA_MAX_LAG_MS;
    this.redisUrl = e.REDIS_URL;
    if (e.REDIS_CLUSTER_NODES)
      this.redisCluster = {
        nodes: e.REDIS_CLUSTER_NODES.split(',').map((node) => {
          const at = node.trim().lastIndexOf(':');
          return { host: node.trim().slice(0, at), port: Number(node.trim().slice(at + 1)) };
        }),
        username: e.REDIS_USERNAME,
        password: e.REDIS_PASSWORD,
        tls: e.REDIS_TLS,
      };
    this.logLevel = e.LOG_LEVEL;
    this.logFormat = e.LOG_FORMAT;
    this.logFile = e.LOG_FILE;
    this.trustProxy = e.TRUST_PROXY;
    this.corsOrigins = e.CORS_ORIGINS.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    this.bodyLimitBytes = e.BODY_LIMIT_BYTES;
    this.shutdownGraceMs = e.SHUTDOWN_GRACE_MS;
    this.petGetSunsetAt = new Date(e.PET_GET_SUNSET_AT);
    this.rateLimit = { banStrikes: e.RATE_LIMIT_BAN_STRIKES, banSeconds: e.RATE_LIMIT_BAN_SECONDS };
    this.keyRotationGraceSeconds = e.KEY_ROTATION_GRACE_SECONDS;
    this.authCacheTtlMs = e.AUTH_CACHE_TTL_MS;
    this.authLookup = { concurrency: e.AUTH_LOOKUP_CONCURRENCY, ratePerSecond: e.AUTH_LOOKUP_RATE };
    this.apiKeyTagKeys = e.API_KEY_TAG_KEYS ? parseSecretKeys(e.API_KEY_TAG_KEYS) : [DEVELOPMENT_TAG_KEY];
    this.outbox = { relayIntervalMs: e.OUTBOX_RELAY_INTERVAL_MS, relayGraceMs: e.OUTBOX_RELAY_GRACE_MS };
    this.jobs = {
      attempts: e.JOB_ATTEMPTS,
      backoffMs: e.JOB_BACKOFF_MS,
      lockMs: e.JOB_LOCK_MS,
      concurrency: e.WORKER_CONCURRENCY,
      sweepIntervalMs: e.SWEEP_INTERVAL_MS,
      batchSize: e.WORKER_BATCH_SIZE,
      queues: e.WORKER_QUEUES?.split(',').map((q) => q.trim()),
      stallMs: e.WORKER_STALL_MS,
    };
    this.webhooks = {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      backoffMs: e.WEBHOOK_BACKOFF_MS,
      maxAgeSeconds: e.WEBHOOK_MAX_AGE_SECONDS,
      allowPrivateUrls: e.ALLOW_PRIVATE_WEBHOOK_URLS,
      accountConcurrency: e.WEBHOOK_ACCOUNT_CONCURRENCY,
      concurrency: e.WEBHOOK_CONCURRENCY,
      legacySignatureUntil: e.WEBHOOK_LEGACY_SIGNATURE_UNTIL,
    };
    this.retention = {
      messagesDays: e.RETENTION_MESSAGES_DAYS,
      eventsDays: e.RETENTION_EVENTS_DAYS,
      webhookDeliveriesDays: e.RETENTION_WEBHOOK_DELIVERIES_DAYS,
      usageMinutesDays: e.RETENTION_USAGE_MINUTES_DAYS,
      usageHoursDays: e.RETENTION_USAGE_HOURS_DAYS,
      intervalMs: e.RETENTION_INTERVAL_MS,
      partitionWidthMs: e.PARTITION_WIDTH_SECONDS * 1000,
      partitionsAhead: e.PARTITIONS_AHEAD,
    };
    this.usageAggregationIntervalMs = e.USAGE_AGGREGATION_INTERVAL_MS;
    this.eventStreamHeartbeatMs = e.EVENT_STREAM_HEARTBEAT_MS;
    this.nameSearchSlots = {
      concurrency: e.NAME_SEARCH_ACCOUNT_CONCURRENCY,
      share: e.NAME_SEARCH_ACCOUNT_SHARE,
      burstMs: e.NAME_SEARCH_ACCOUNT_BURST_MS,
    };
    this.demoSeed = e.DEMO_SEED;
    this.queueDashboardToken = e.QUEUE_DASHBOARD_TOKEN;
    this.tracing = {
      endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: e.OTEL_SERVICE_NAME,
      exportDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
      sampleRatio: e.OTEL_TRACES_SAMPLER_ARG,
    };
    this.webhookSecretKeys = e.WEBHOOK_SECRET_KEYS ? parseSecretKeys(e.WEBHOOK_SECRET_KEYS) : [DEVELOPMENT_SECRET_KEY];
  }
}

export class ConfigError extends Error {}

export const CONFIG_VARIABLES = Object.keys(schema.shape) as (keyof Env)[];

// One line naming each bad variable, never its value (a URL may carry a password). Without
// `source`, a `.env` file fills in what the environment leaves unset.
export function loadConfig(source?: Record<string, string | undefined>): AppConfig {
  if (!source && existsSync('.env')) process.loadEnvFile('.env');
  const env = source ?? process.env;
  const picked = Object.fromEntries(
    CONFIG_VARIABLES.map((k) => [k, env[k] === '' && k !== 'CORS_ORIGINS' ? undefined : env[k]]),
  );
  const parsed = checked.safeParse(picked);
  if (!parsed.success) {
    const byVariable = new Map<string, string[]>();
    for (const i of parsed.error.issues)
      byVariable.set(i.path.join('.'), [...(byVariable.get(i.path.join('.')) ?? []), i.message]);
    const problems = [...byVariable].map(([name, messages]) => `${name}: ${messages.join(', ')}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return new AppConfig(parsed.data);
}
