import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './config';

describe('QUEUE_DASHBOARD_TOKEN', () => {
  it('leaves the dashboard off when unset or empty', () => {
    expect(loadConfig({}).queueDashboardToken).toBeUndefined();
    expect(loadConfig({ QUEUE_DASHBOARD_TOKEN: '' }).queueDashboardToken).toBeUndefined();
  });

  it('refuses a token shorter than 24 characters, naming the variable but not the value', () => {
    const short = 'guessable-token';
    expect(() => loadConfig({ QUEUE_DASHBOARD_TOKEN: short })).toThrow(ConfigError);
    expect(() => loadConfig({ QUEUE_DASHBOARD_TOKEN: short })).toThrow(/QUEUE_DASHBOARD_TOKEN/);
    expect(() => loadConfig({ QUEUE_DASHBOARD_TOKEN: short })).not.toThrow(new RegExp(short));
  });
});

describe('REDIS_CLUSTER_NODES', () => {
  it('leaves Redis a single node (REDIS_URL) when unset', () => {
    expect(loadConfig({}).redisCluster).toBeUndefined();
  });

  it('lists the seed nodes with the cluster credentials and TLS', () => {
    const config = loadConfig({
      REDIS_CLUSTER_NODES: 'redis-0.redis:6379, 10.0.0.2:7000',
      REDIS_PASSWORD: 'pw',
      REDIS_TLS: 'true',
    });
    expect(config.redisCluster).toEqual({
      nodes: [
        { host: 'redis-0.redis', port: 6379 },
        { host: '10.0.0.2', port: 7000 },
      ],
      username: undefined,
      password: 'pw',
      tls: true,
    });
  });

  it('refuses a node without a port, naming the variable', () => {
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'redis-0,redis-1:6379' })).toThrow(/REDIS_CLUSTER_NODES/);
  });

  it('refuses cluster credentials without a cluster (a single node takes them from REDIS_URL)', () => {
    expect(() => loadConfig({ REDIS_PASSWORD: 'pw' })).toThrow(/REDIS_PASSWORD: only with REDIS_CLUSTER_NODES/);
  });
});

describe('retention', () => {
  it('keeps finished messages, events and deliveries 30 days by default, and runs every minute', () => {
    expect(loadConfig({}).retention).toEqual(
      expect.objectContaining({ messagesDays: 30, eventsDays: 30, webhookDeliveriesDays: 30, intervalMs: 60_000 }),
    );
  });

  it('keeps usage 2 days per minute and 90 days per hour by default', () => {
    expect(loadConfig({}).retention).toEqual(expect.objectContaining({ usageMinutesDays: 2, usageHoursDays: 90 }));
  });

  it('refuses deliveries kept longer than their events', () => {
    expect(() => loadConfig({ RETENTION_WEBHOOK_DELIVERIES_DAYS: '40' })).toThrow(/RETENTION_WEBHOOK_DELIVERIES_DAYS/);
  });

  it('refuses events kept no longer than a delivery is retried', () => {
    expect(() => loadConfig({ RETENTION_EVENTS_DAYS: '3', RETENTION_WEBHOOK_DELIVERIES_DAYS: '3' })).toThrow(
      /RETENTION_EVENTS_DAYS/,
    );
  });
});

describe('DATABASE_REPLICA_URLS', () => {
  it('lists no replica when unset, and leaves a replica 1 s of lag', () => {
    expect(loadConfig({}).databaseReplicaUrls).toEqual([]);
    expect(loadConfig({}).databaseReplicaMaxLagMs).toBe(1_000);
  });

  it('lists the replicas in order', () => {
    const urls = 'postgres://reader@replica-0:5432/petstore, postgres://reader@replica-1:5432/petstore';
    expect(loadConfig({ DATABASE_REPLICA_URLS: urls }).databaseReplicaUrls).toEqual([
      'postgres://reader@replica-0:5432/petstore',
      'postgres://reader@replica-1:5432/petstore',
    ]);
  });

  it('refuses an entry that is not a postgres:// URL, naming the variable', () => {
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://a/b,redis://c' })).toThrow(/DATABASE_REPLICA_URLS/);
  });
});

describe('RETENTION_*_DAYS', () => {
  it('takes fractions of a day (a bench keeps records minutes)', () => {
    const config = loadConfig({ RETENTION_MESSAGES_DAYS: '0.5', PARTITION_WIDTH_SECONDS: '3600' });
    expect(config.retention.messagesDays).toBe(0.5);
  });

  it('refuses a retention shorter than one partition, naming the variable in one line', () => {
    expect(() => loadConfig({ RETENTION_MESSAGES_DAYS: '0.5' })).toThrow(
      /^invalid configuration: RETENTION_MESSAGES_DAYS: must be at least one partition \(PARTITION_WIDTH_SECONDS=86400\)[^\n]*$/,
    );
  });
});

describe('PARTITION_WIDTH_SECONDS / PARTITIONS_AHEAD', () => {
  it('partitions by day with two days created ahead by default', () => {
    expect(loadConfig({}).retention).toEqual(
      expect.objectContaining({ partitionWidthMs: 86_400_000, partitionsAhead: 2 }),
    );
  });

  it('refuses partitions made ahead that the job would not renew in time', () => {
    expect(() =>
      loadConfig({ PARTITION_WIDTH_SECONDS: '10', PARTITIONS_AHEAD: '1', RETENTION_INTERVAL_MS: '10000' }),
    ).toThrow(/PARTITIONS_AHEAD/);
  });
});

describe('NAME_SEARCH_ACCOUNT_*', () => {
  it("runs one of an account's searches at once, within a quarter of the clock after a 1 s burst, by default", () => {
    expect(loadConfig({}).nameSearchSlots).toEqual({ concurrency: 1, share: 0.25, burstMs: 1000 });
  });

  it('refuses a share of the clock outside (0, 1], naming the variable', () => {
    expect(() => loadConfig({ NAME_SEARCH_ACCOUNT_SHARE: '0' })).toThrow(/NAME_SEARCH_ACCOUNT_SHARE/);
    expect(() => loadConfig({ NAME_SEARCH_ACCOUNT_SHARE: '1.5' })).toThrow(/NAME_SEARCH_ACCOUNT_SHARE/);
  });
});

describe('BIND_ADDRESS', () => {
  it('is unset by default (every interface), and takes an IPv4 or IPv6 address', () => {
    expect(loadConfig({}).bindAddress).toBeUndefined();
    expect(loadConfig({ BIND_ADDRESS: '127.0.0.1' }).bindAddress).toBe('127.0.0.1');
    expect(loadConfig({ BIND_ADDRESS: '::1' }).bindAddress).toBe('::1');
    expect(loadConfig({ BIND_ADDRESS: '0.0.0.0' }).bindAddress).toBe('0.0.0.0');
  });

  it.each(['localhost', '10.0.0.0/8', '127.1', '256.0.0.1'])('refuses %s, naming the variable', (value) => {
    expect(() => loadConfig({ BIND_ADDRESS: value })).toThrow(
      /^invalid configuration: BIND_ADDRESS: must be an IPv4 or IPv6 address/,
    );
  });
});

describe('OpenTelemetry variables', () => {
  it('OTEL_RESOURCE_ATTRIBUTES: key=value pairs, percent-decoded; empty by default', () => {
    expect(loadConfig({}).tracing.resourceAttributes).toEqual({});
    expect(
      loadConfig({ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod, team=pets%20%26%20co,k%3Dx=a%2Cb' })
        .tracing.resourceAttributes,
    ).toEqual({ 'deployment.environment.name': 'prod', team: 'pets & co', 'k=x': 'a,b' });
  });

  it('OTEL_RESOURCE_ATTRIBUTES: refuses entries without a key or with bad encoding, by position, never echoing them', () => {
    expect(() => loadConfig({ OTEL_RESOURCE_ATTRIBUTES: 'a=1,secret,=2,c=%zz' })).toThrow(
      /^invalid configuration: OTEL_RESOURCE_ATTRIBUTES: must be a comma-separated list of key=value, percent-encoded \(entries not understood: 2, 3, 4\)$/,
    );
  });

  it('OTEL_TRACES_SAMPLER: parentbased_always_on by default; parentbased_traceidratio when only the ratio is set', () => {
    expect(loadConfig({}).tracing.sampling).toEqual({ sampler: 'parentbased_always_on', ratio: 1 });
    expect(loadConfig({ OTEL_TRACES_SAMPLER_ARG: '0.25' }).tracing.sampling).toEqual({
      sampler: 'parentbased_traceidratio',
      ratio: 0.25,
    });
    expect(loadConfig({ OTEL_TRACES_SAMPLER: 'always_off' }).tracing.sampling).toEqual({
      sampler: 'always_off',
      ratio: 1,
    });
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => loadConfig({ OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
  });
});

describe('TRUST_PROXY', () => {
  it('trusts no proxy by default, one hop for true, N hops for a number', () => {
    expect(loadConfig({}).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });

  it('takes a comma-separated list of IPv4 and IPv6 addresses and CIDRs', () => {
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1/32, 10.0.0.0/8,192.0.2.7 ,fd00::/8,::1' }).trustProxy).toEqual([
      '127.0.0.1/32',
      '10.0.0.0/8',
      '192.0.2.7',
      'fd00::/8',
      '::1',
    ]);
  });

  it.each([
    '10.0.0.0/33',
    '::/129',
    '10.0.0.0/8/1',
    '10.0.0.0/x',
    '10.1',
    '0x7f.0.0.1',
    'loopback',
    '10.0.0.1,',
    'yes',
  ])('refuses %s, naming the variable and the bad entry by position', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(
      /^invalid configuration: TRUST_PROXY: must be true, false, a number/,
    );
  });

  it('names the bad entries by position without echoing them', () => {
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/8,secret-host,::1,x' })).toThrow(
      /\(entries not understood: 2, 4\)$/,
    );
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/8,secret-host' })).not.toThrow(/secret-host/);
  });
});

describe('KEY_ROTATION_GRACE_SECONDS', () => {
  it('is a day by default and at most 7 days, as a grace asked for over the API', () => {
    expect(loadConfig({}).keyRotationGraceSeconds).toBe(86_400);
    expect(loadConfig({ KEY_ROTATION_GRACE_SECONDS: '604800' }).keyRotationGraceSeconds).toBe(604_800);
    expect(() => loadConfig({ KEY_ROTATION_GRACE_SECONDS: '604801' })).toThrow(/KEY_ROTATION_GRACE_SECONDS/);
  });
});

describe('.env in the working directory', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'petstore-env-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** loadConfig() in a process of its own in `dir`: jest's sandboxed process.env never sees what process.loadEnvFile sets. */
  function loadConfigIn(env: Record<string, string> = {}): Record<string, unknown> {
    const script = `
      const { loadConfig } = require(${JSON.stringify(join(__dirname, 'config'))});
      try {
        const c = loadConfig();
        console.log(JSON.stringify({ stallMs: c.jobs.stallMs, logLevel: c.logLevel, corsOrigins: c.corsOrigins }));
      } catch (err) {
        console.log(JSON.stringify({ error: err.message }));
      }`;
    const run = spawnSync(process.execPath, ['-r', require.resolve('ts-node/register/transpile-only'), '-e', script], {
      cwd: dir,
      env: { TS_NODE_PROJECT: join(__dirname, '..', '..', '..', 'tsconfig.json'), ...env },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    return JSON.parse(run.stdout) as Record<string, unknown>;
  }

  it('fills in what the environment leaves unset; a variable set in the environment wins', () => {
    writeFileSync(
      join(dir, '.env'),
      '# local\nWORKER_STALL_MS=5000\nLOG_LEVEL=debug\nCORS_ORIGINS="https://a.example, https://b.example"\n',
    );
    expect(loadConfigIn({ LOG_LEVEL: 'warn' })).toEqual({
      stallMs: 5_000,
      logLevel: 'warn',
      corsOrigins: ['https://a.example', 'https://b.example'],
    });
  });

  it('is optional: without one the defaults hold', () => {
    expect(loadConfigIn()).toEqual({ stallMs: 120_000, logLevel: 'info', corsOrigins: [] });
  });

  it('names a bad value from the file as it names one from the environment', () => {
    writeFileSync(join(dir, '.env'), 'WORKER_STALL_MS=soon\n');
    expect(loadConfigIn()).toEqual({ error: expect.stringMatching(/^invalid configuration: WORKER_STALL_MS: /) });
  });

  it('is not read when the caller hands over the variables (tests, tools)', () => {
    writeFileSync(join(dir, '.env'), 'WORKER_STALL_MS=5000\n');
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(loadConfig({}).jobs.stallMs).toBe(120_000);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('DATABASE_URL', () => {
  it('names one server as it always did', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u:p@db:6432/shop?sslmode=require' });
    expect(config.databaseUrl).toBe('postgres://u:p@db:6432/shop?sslmode=require');
    expect(config.databaseHosts).toEqual([{ host: 'db', port: 6432 }]);
    expect(loadConfig({}).databaseHosts).toEqual([{ host: '127.0.0.1', port: 5432 }]);
  });

  it("takes libpq's several hosts with target_session_attrs=read-write, as pg_autoctl show uri prints them", () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u:p@pg-a:5432,pg-b,[::1]:5433/shop?target_session_attrs=read-write&sslmode=prefer',
    });
    expect(config.databaseHosts).toEqual([
      { host: 'pg-a', port: 5432 },
      { host: 'pg-b', port: 5432 },
      { host: '::1', port: 5433 },
    ]);
    // What node-postgres reads: one server, without the attribute it does not know.
    expect(config.databaseUrl).toBe('postgres://u:p@pg-a:5432/shop?sslmode=prefer');
    expect(config.redisNamespace).toBe('shop');
  });

  it('refuses several hosts without read-write, or a malformed list, naming the variable but not the value', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u:secret@a:1,b:2/db' })).toThrow(
      /DATABASE_URL: with several hosts, must say target_session_attrs=read-write/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u:secret@a:1,b:2/db?target_session_attrs=any' })).not.toThrow(
      /secret/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@a:1,b:x/db?target_session_attrs=read-write' })).toThrow(
      /DATABASE_URL: must list its hosts/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'mysql://u@a/db' })).toThrow(/DATABASE_URL: must be a postgres:\/\/ URL/);
  });
});

describe('REDIS_NAMESPACE', () => {
  it("defaults to the database's name, so two deployments on one Redis differ", () => {
    expect(loadConfig({}).redisNamespace).toBe('petstore');
    expect(loadConfig({ DATABASE_URL: 'postgres://u@db:5432/shop_eu' }).redisNamespace).toBe('shop_eu');
  });

  it('keeps only characters safe in a key and outside a hash tag', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u@db/my%20%7Bdb%7D' }).redisNamespace).toBe('my__db_');
  });

  it('takes the setting over the default, and refuses braces, naming the variable', () => {
    expect(loadConfig({ REDIS_NAMESPACE: 'eu-1' }).redisNamespace).toBe('eu-1');
    expect(() => loadConfig({ REDIS_NAMESPACE: 'a{b}' })).toThrow(/REDIS_NAMESPACE: must be 1-64 of/);
  });
});
