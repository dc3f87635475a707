import { INestApplicationContext } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { AppConfig, loadConfig } from '@app/config';
import { AppModule } from '../../../apps/api/src/app.module';
import { configureApp } from '../../../apps/api/src/configure-app';
import { ApiHttpServer } from '../../../apps/api/src/http-server';
import { MetricsServerService } from '../../../apps/api/src/metrics/metrics-server.service';
import { OpsServerService } from '../../../apps/worker/src/ops/ops-server.service';
import { closeAll, startWorker } from '../../support/test-apps';

/** The address a service's server listens on (its `server` field). */
const boundTo = (service: object) =>
  ((service as { server?: Server }).server?.address() as AddressInfo | null)?.address;

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * BIND_ADDRESS: the API's port, its metrics port and the worker's ops port listen on that address
 * only; unset, on every interface (Node's default, what they always did).
 */
describe('BIND_ADDRESS', () => {
  describe('set to 127.0.0.1', () => {
    let app: NestFastifyApplication;
    let server: Server;
    let worker: INestApplicationContext;
    const before = Object.fromEntries(SIGNALS.map((s) => [s, process.listeners(s)]));

    beforeAll(async () => {
      const config = loadConfig({ ...process.env, BIND_ADDRESS: '127.0.0.1' });
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
        .overrideProvider(AppConfig)
        .useValue(config)
        .compile();
      const apiServer = new ApiHttpServer(config);
      app = moduleRef.createNestApplication<NestFastifyApplication>(apiServer.adapter(), {
        bodyParser: false,
        logger: false,
      });
      configureApp(app);
      // As main.ts serves it (its signal handlers are removed after).
      server = await apiServer.serve(app);
      worker = await startWorker({ BIND_ADDRESS: '127.0.0.1' });
    });
    afterAll(async () => {
      for (const s of SIGNALS)
        for (const listener of process.listeners(s))
          if (!before[s].includes(listener)) process.removeListener(s, listener);
      await closeAll([
        () => worker?.close(),
        async () => {
          const closed = new Promise((resolve) => server.close(resolve));
          server.closeAllConnections();
          await closed;
        },
        () => app?.close(),
      ]);
    });

    it('the API listens on it', () => {
      expect((server.address() as AddressInfo).address).toBe('127.0.0.1');
    });

    it("the API's metrics server listens on it", () => {
      expect(boundTo(app.get(MetricsServerService))).toBe('127.0.0.1');
    });

    it("the worker's ops server listens on it", () => {
      expect(boundTo(worker.get(OpsServerService))).toBe('127.0.0.1');
    });
  });

  it('unset: every interface, as before', async () => {
    const worker = await startWorker();
    try {
      expect(['::', '0.0.0.0']).toContain(boundTo(worker.get(OpsServerService)));
    } finally {
      await worker.close();
    }
  });
});
