import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Histogram, register } from 'prom-client';
import { observeHeapAfterFullGc } from './heap-after-gc';

// Node's and the process's defaults under their standard names (process_*, nodejs_*), the ones stock
// Node.js dashboards and alerts query; the metrics this service defines start with petstore_.
collectDefaultMetrics();
observeHeapAfterFullGc();

const httpDuration = new Histogram({
  name: 'petstore_http_request_duration_seconds',
  help: 'HTTP requests by route template, method and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
});

// The route label is the template, never the raw path; answers the client abandoned are left out.
export function observeHttpRequest(
  req: IncomingMessage,
  res: ServerResponse,
  route: string | undefined,
  seconds: number,
): void {
  if (!res.writableFinished) return;
  httpDuration.observe({ method: req.method, route: route ?? 'unmatched', status: String(res.statusCode) }, seconds);
}

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: register.contentType, body: await register.metrics() };
}
