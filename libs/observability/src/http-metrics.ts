import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Histogram, register } from 'prom-client';

collectDefaultMetrics({ prefix: 'petstore_' });

const httpDuration = new Histogram({
  name: 'petstore_http_request_duration_seconds',
  help: 'HTTP requests by route template, method and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
});

// The route label is the template, never the raw path.
export function httpMetricsMiddleware(req: Request, res: Response, next: NextFunction): void {
  const end = httpDuration.startTimer();
  res.once('finish', () => {
    const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
    end({ method: req.method, route: String(route), status: String(res.statusCode) });
  });
  next();
}

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: register.contentType, body: await register.metrics() };
}
