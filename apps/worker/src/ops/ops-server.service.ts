import { createServer, Server } from 'node:http';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { metricsText, ReadinessService } from '@app/observability';

/**
 * The worker's only HTTP surface: /health/live, /health/ready and /metrics on WORKER_PORT,
 * for probes and Prometheus. No API routes live here.
 */
@Injectable()
export class OpsServerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OpsServerService.name);
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly readiness: ReadinessService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.answer(req.url ?? '/').then(({ status, type, body }) => {
        res.writeHead(status, { 'Content-Type': type }).end(body);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(this.config.workerPort, resolve));
    this.logger.log({ port: this.port() }, 'worker ops server listening');
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
        const r = await this.readiness.check();
        return r.ready
          ? json(200, { status: 'ok', checks: r.checks })
          : json(503, { code: 'service_unavailable', message: 'Not ready', status: 503, details: r.checks });
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
