import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0', '']).transform((v) => v === 'true' || v === '1');

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().nonnegative();

/**
 * Every environment variable the service reads, with its default.
 * This file is the only place that looks at process.env (see loadConfig).
 */
const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  DATABASE_URL: z
    .string()
    .url()
    .refine((u) => /^postgres(ql)?:\/\//.test(u), 'must be a postgres:// URL')
    .default('postgres://postgres@127.0.0.1:5432/petstore'),
  // Measured (docs/benchmarks.md): orders ran ~25% faster with 20 than with 10 at 50 connections; reads the same.
  DATABASE_POOL_SIZE: positiveInt.default(20),
  REDIS_URL: z
    .string()
    .url()
    .refine((u) => /^rediss?:\/\//.test(u), 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379'),
  LOG_FILE: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // true (or 1) trusts the one proxy in front of us; N trusts N hops. Never "all": the
  // left-most X-Forwarded-For entry is whatever the client wrote (limiter evasion).
  TRUST_PROXY: z
    .string()
    .regex(/^(true|false|\d+)$/, 'must be true, false or a number of proxy hops')
    .transform((v) => (v === 'true' ? 1 : v === 'false' ? 0 : Number(v)))
    .default('false'),
  CORS_ORIGINS: z.string().default(''),
  BODY_LIMIT_BYTES: positiveInt.default(100 * 1024),
  SHUTDOWN_GRACE_MS: positiveInt.default(10_000),
  PET_GET_SUNSET_AT: z.string().datetime({ offset: true }).default('2027-06-30T00:00:00Z'),
  RATE_LIMIT_BAN_STRIKES: positiveInt.default(10),
  RATE_LIMIT_BAN_SECONDS: positiveInt.default(900),
  KEY_ROTATION_GRACE_SECONDS: nonNegativeInt.default(86_400),
  AUTH_CACHE_TTL_MS: positiveInt.default(60_000),
  OUTBOX_RELAY_INTERVAL_MS: positiveInt.default(1_000),
  OUTBOX_RELAY_GRACE_MS: nonNegativeInt.default(5_000),
  JOB_ATTEMPTS: positiveInt.default(5),
  JOB_BACKOFF_MS: positiveInt.default(1_000),
  JOB_LOCK_MS: positiveInt.default(30_000),
  SWEEP_INTERVAL_MS: positiveInt.default(30_000),
  WORKER_CONCURRENCY: positiveInt.default(10),
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  WEBHOOK_BACKOFF_MS: positiveInt.default(30_000),
  WEBHOOK_MAX_AGE_SECONDS: positiveInt.default(3 * 24 * 3600),
  ALLOW_PRIVATE_WEBHOOK_URLS: bool.default('false'),
  DEMO_SEED: bool.default('true'),
});

type Env = z.infer<typeof schema>;

/** Typed, validated configuration. Built once per process by loadConfig(). */
export class AppConfig {
  readonly env: Env['NODE_ENV'];
  readonly port: number;
  readonly workerPort: number;
  readonly databaseUrl: string;
  readonly databasePoolSize: number;
  readonly redisUrl: string;
  readonly logLevel: Env['LOG_LEVEL'];
  /** Log to this file instead of stdout (tests scan it for leaked secrets). */
  readonly logFile?: string;
  /** How many proxies in front of the API to trust for X-Forwarded-For (0: none). */
  readonly trustProxy: number;
  readonly corsOrigins: string[];
  readonly bodyLimitBytes: number;
  readonly shutdownGraceMs: number;
  readonly petGetSunsetAt: Date;
  readonly rateLimit: { banStrikes: number; banSeconds: number };
  readonly keyRotationGraceSeconds: number;
  readonly authCacheTtlMs: number;
  readonly outbox: { relayIntervalMs: number; relayGraceMs: number };
  readonly jobs: {
    attempts: number;
    backoffMs: number;
    /** A crashed worker's jobs run again within about twice this (BullMQ lock and stalled-check period). */
    lockMs: number;
    concurrency: number;
    sweepIntervalMs: number;
  };
  readonly webhooks: { timeoutMs: number; backoffMs: number; maxAgeSeconds: number; allowPrivateUrls: boolean };
  readonly demoSeed: boolean;

  constructor(e: Env) {
    this.env = e.NODE_ENV;
    this.port = e.PORT;
    this.workerPort = e.WORKER_PORT;
    this.databaseUrl = e.DATABASE_URL;
    this.databasePoolSize = e.DATABASE_POOL_SIZE;
    this.redisUrl = e.REDIS_URL;
    this.logLevel = e.LOG_LEVEL;
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
    this.outbox = { relayIntervalMs: e.OUTBOX_RELAY_INTERVAL_MS, relayGraceMs: e.OUTBOX_RELAY_GRACE_MS };
    this.jobs = {
      attempts: e.JOB_ATTEMPTS,
      backoffMs: e.JOB_BACKOFF_MS,
      lockMs: e.JOB_LOCK_MS,
      concurrency: e.WORKER_CONCURRENCY,
      sweepIntervalMs: e.SWEEP_INTERVAL_MS,
    };
    this.webhooks = {
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      backoffMs: e.WEBHOOK_BACKOFF_MS,
      maxAgeSeconds: e.WEBHOOK_MAX_AGE_SECONDS,
      allowPrivateUrls: e.ALLOW_PRIVATE_WEBHOOK_URLS,
    };
    this.demoSeed = e.DEMO_SEED;
  }
}

export class ConfigError extends Error {}

/** The variable names the service understands, for docs and manifest checks. */
export const CONFIG_VARIABLES = Object.keys(schema.shape) as (keyof Env)[];

/**
 * Validates the environment and fails with one line per bad variable, naming it,
 * so a misconfigured container stops at boot instead of misbehaving later.
 * Values are never echoed: a URL may carry a password.
 */
export function loadConfig(source: Record<string, string | undefined> = process.env): AppConfig {
  const picked = Object.fromEntries(
    CONFIG_VARIABLES.map((k) => [k, source[k] === '' && k !== 'CORS_ORIGINS' ? undefined : source[k]]),
  );
  const parsed = schema.safeParse(picked);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return new AppConfig(parsed.data);
}
