import { INestApplication, INestApplicationContext } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { AsyncLocalStorage } from 'node:async_hooks';
import { RequestListener, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import Redis, { Cluster } from 'ioredis';
import { AccountsService } from '@app/access';
import { AppConfig, Clock, loadConfig } from '@app/config';
import { Plan } from '@app/access';
import { AppModule } from '../../apps/api/src/app.module';
import { configureApp } from '../../apps/api/src/configure-app';
import { ApiHttpServer } from '../../apps/api/src/http-server';
import { MetricsServerService } from '../../apps/api/src/metrics/metrics-server.service';
import { JobQueues } from '@app/jobs';
import { OpsServerService } from '../../apps/worker/src/ops/ops-server.service';
import { QueueWorkers } from '../../apps/worker/src/runtime/queue-workers';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { HttpClient } from './http';

export type EnvOverrides = Record<string, string>;

/** The Redis clients a boot under way opened (booted() reads it; boots may run side by side). */
const opening = new AsyncLocalStorage<Set<Redis | Cluster>>();
for (const type of [Redis, Cluster]) {
  const connect = type.prototype.connect as (this: Redis | Cluster, ...args: unknown[]) => Promise<void>;
  jest.spyOn(type.prototype, 'connect').mockImplementation(function (this: Redis | Cluster, ...args: unknown[]) {
    opening.getStore()?.add(this);
    return connect.apply(this, args);
  });
}

/**
 * Compiles and starts an app. When that fails, what it had opened is closed: its Redis clients would
 * otherwise reconnect for ever (the file's redis-server stops) and keep Jest's process from exiting.
 */
async function booted<T extends INestApplicationContext>(
  compile: () => Promise<T>,
  start: (app: T) => Promise<unknown>,
): Promise<T> {
  const clients = new Set<Redis | Cluster>();
  return opening.run(clients, async () => {
    let app: T | undefined;
    try {
      app = await compile();
      await start(app);
      return app;
    } catch (err) {
      await app?.close().catch(() => undefined);
      for (const client of clients) client.disconnect();
      throw err;
    }
  });
}

export interface RunningApi {
  app: INestApplication;
  url: string;
  /** The API's /metrics server (METRICS_PORT), apart from `url`. */
  metricsUrl: string;
  config: AppConfig;
  close(): Promise<void>;
}

/**
 * The real API (same hooks and server as production) on a random port; `wrap` sees every request first, `probe`
 * the app before configureApp (its hooks run before the app's own).
 */
export async function startApi(
  env: EnvOverrides = {},
  opts: {
    clock?: Clock;
    wrap?: (app: RequestListener) => RequestListener;
    probe?: (app: NestFastifyApplication) => void;
  } = {},
): Promise<RunningApi> {
  const config = loadConfig({ ...process.env, ...env });
  const apiServer = new ApiHttpServer(config, { wrap: opts.wrap });
  let server!: Server;
  const app = await booted(
    async () => {
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
        .overrideProvider(AppConfig)
        .useValue(config)
        .overrideProvider(Clock)
        .useValue(opts.clock ?? new Clock())
        .compile();
      return moduleRef.createNestApplication<NestFastifyApplication>(apiServer.adapter(), {
        bodyParser: false,
        logger: false,
      });
    },
    async (created) => {
      opts.probe?.(created);
      configureApp(created);
      // On the production server (serve() in main.ts), without its signal handling.
      server = await apiServer.listen(created, 0, '127.0.0.1');
    },
  );
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
    await app.close();
  };
  const metricsUrl = `http://127.0.0.1:${app.get(MetricsServerService).port()}`;
  return { app, url: `http://127.0.0.1:${port}`, metricsUrl, config, close };
}

/** The real worker (processors, outbox relay, ops server) in this process. */
export async function startWorker(
  env: EnvOverrides = {},
  opts: { clock?: Clock } = {},
): Promise<INestApplicationContext> {
  const config = loadConfig({ ...process.env, ...env });
  return booted(
    () =>
      Test.createTestingModule({ imports: [WorkerModule] })
        .overrideProvider(AppConfig)
        .useValue(config)
        .overrideProvider(Clock)
        .useValue(opts.clock ?? new Clock())
        .compile(),
    (moduleRef) => moduleRef.init(),
  );
}

/** The ops server (health, /metrics) of a worker started by startWorker. */
export const workerOpsUrl = (worker: INestApplicationContext) =>
  `http://127.0.0.1:${worker.get(OpsServerService).port()}`;

/** Whether every BullMQ client of a worker started by startWorker (its queues' and its consumers') is connected. */
export async function queueClientsReady(worker: INestApplicationContext): Promise<boolean> {
  const clients = await Promise.all([
    ...worker
      .get(JobQueues)
      .all()
      .map((q) => q.backend.client),
    ...worker.get(QueueWorkers).consumers.map(({ worker: w }) => w.backend.client),
  ]);
  return clients.every((client) => client.status === 'ready');
}

let accountSeq = 0;

/** A new account with its first key, created the way the operator CLI does it. */
export async function createAccount(
  api: RunningApi,
  plan: Plan = 'business',
  limits: { limitPerMinute?: number; limitPerDay?: number } = {},
): Promise<{ accountId: number; apiKey: string; keyId: number }> {
  const { account, key } = await api.app
    .get(AccountsService)
    .create(`test-account-${process.pid}-${++accountSeq}`, plan, limits);
  return { accountId: account.id, apiKey: key.secret, keyId: key.id };
}

/** Limits a file's burst of requests never reaches (with the enterprise plan). */
export const ROOMY_LIMITS = { limitPerMinute: 100_000, limitPerDay: 1_000_000 };

export interface ApiWithAccount {
  api: RunningApi;
  /** Signs with the account's key. */
  http: HttpClient;
  accountId: number;
  apiKey: string;
  keyId: number;
}

/** The API and one account on it: what most e2e files start with. */
export async function startApiWithAccount(
  plan: Plan = 'business',
  limits: { limitPerMinute?: number; limitPerDay?: number } = {},
): Promise<ApiWithAccount> {
  const api = await startApi();
  const account = await createAccount(api, plan, limits);
  return { api, http: new HttpClient(api.url, account.apiKey), ...account };
}

/**
 * Runs every closer, in order, whatever the others do, then throws the first failure: an
 * afterAll that stopped at its first failing close left apps running in the Jest process, and
 * their relay and sweep worked on the next test file's database.
 */
export async function closeAll(closers: Array<() => Promise<unknown> | undefined>): Promise<void> {
  const failures: unknown[] = [];
  for (const close of closers) {
    try {
      await close();
    } catch (err) {
      failures.push(err);
    }
  }
  if (failures.length) throw failures[0];
}
