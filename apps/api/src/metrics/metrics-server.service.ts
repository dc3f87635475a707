import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { metricsText } from '@app/observability';

/**
 * The API's Prometheus /metrics on METRICS_PORT, apart from the public port: what it shows
 * (route names, error rates, dependency state) is for the operator, and a Service or ingress
 * in front of PORT then never exposes it.
 */
@Injectable()
export class MetricsServerService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServerService.name);
  private server?: Server;

  constructor(private readonly config: AppConfig) {}

  async onApplicationBootstrap(): Promise<void> {
    this.server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
        return;
      }
      void metricsText().then(({ contentType, body }) =>
        res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(body),
      );
    });
    await new Promise<void>((resolve, reject) => {
      const port = this.config.metricsPort;
      this.server?.once('error', (err) => reject(new Error(`cannot listen on METRICS_PORT ${port}: ${err.message}`)));
      this.server?.listen(port, resolve);
    });
    this.logger.log({ port: this.port() }, 'metrics server listening');
  }

  /** The port it listens on (METRICS_PORT=0 picks a free one). */
  port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? this.config.metricsPort;
  }

  async onApplicationShutdown(): Promise<void> {
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}
