import { createServer, Server } from 'node:http';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { listenOn, ReadinessService, unreachable } from '@app/lifecycle';
import { metricsText } from '@app/observability';
import { QUEUE_DASHBOARD_PATH, QueueDashboardService } from './queue-dashboard.service';

/**
 * The worker's only HTTP surface: /health/live, /health/ready and /metrics on WORKER_PORT,
 * for probes and Prometheus, and the token-gated queue dashboard under /queues. No API routes live here.
 */
@Injectable()
export class OpsServerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OpsServerService.name);
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly readiness: ReadinessService,
    private readonly dashboard: QueueDashboardService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const dashboard = this.dashboard.handler;
      if (dashboard && (path === QUEUE_DASHBOARD_PATH || path.startsWith(`${QUEUE_DASHBOARD_PATH}/`))) {
        return dashboard(req, res);
      }
      void this.answer(req.url ?? '/').then(({ status, type, body }) => {
        res.writeHead(status, { 'Content-Type': type }).end(body);
      });
    });
    await listenOn(this.server, 'WORKER_PORT', this.config.workerPort, this.config.bindAddress);
    this.logger.log({ port: this.port(), address: this.config.bindAddress }, 'worker ops server listening');
  }

  port(): number {
    const address = this.server?.address();
    return typeof address === 'object' && address ? address.port : this.config.workerPort;
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }

  private async answer(url: string): Promise<{ status: number; type: string; body: string }> {
    const json = (status: number, body: unknown) => ({ status, type: 'application/json', body: JSON.stringify(body) });
    switch (url.split('?')[0]) {
      case '/health/live':
        return json(200, { status: 'ok' });
      case '/health/ready': {
        // Both: without either it does no work. Not behind a Service, so readiness only holds a
        // rollout back (a new worker that cannot work does not replace one that can).
        const r = await this.readiness.check(['postgres', 'redis']);
        return r.ready
          ? json(200, { status: r.status, checks: r.checks })
          : json(503, { code: 'service_unavailable', message: 'Not ready', status: 503, details: unreachable(r) });
      }
      case '/metrics': {
        const m = await metricsText();
        return { status: 200, type: m.contentType, body: m.body };
      }
      default:
        return json(404, { code: 'not_found', message: 'No such route', status: 404 });
    }
  }
}
