import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { ApiError } from '@app/errors';
import { listenOn, ReadinessService } from '@app/lifecycle';
import { metricsText } from '@app/observability';
import { apiReadiness } from '../health/api-readiness';

// Off the public port, so a Service or ingress in front of PORT never exposes it. The health probes
// are answered here too, so the kubelet's do not queue behind public traffic.
@Injectable()
export class MetricsServerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServerService.name);
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly readiness: ReadinessService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = req.method === 'GET' ? (req.url ?? '/').split('?')[0] : undefined;
      if (path === '/metrics')
        void metricsText().then(({ contentType, body }) =>
          res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(body),
        );
      else if (path === '/health/live') json(res, 200, { status: 'ok' });
      else if (path === '/health/ready')
        void apiReadiness(this.readiness).then(
          (body) => json(res, 200, body),
          (err: ApiError) => json(res, err.status, err.toBody(), err.headers),
        );
      else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
    });
    await listenOn(this.server, 'METRICS_PORT', this.config.metricsPort, this.config.bindAddress);
    this.logger.log({ port: this.port(), address: this.config.bindAddress }, 'metrics server listening');
  }

  /** METRICS_PORT=0 picks a free one. */
  port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? this.config.metricsPort;
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}
