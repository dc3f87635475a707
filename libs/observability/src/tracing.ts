import type * as OtelApi from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@app/config';
import { packageVersion } from './package-version';

// Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and then nothing of OpenTelemetry is loaded.
// Context crosses the queue as a `traceparent` stored with the durable record (relay, sweep).

type SpanKindName = 'server' | 'client' | 'producer' | 'consumer' | 'internal';
type Attributes = Record<string, string | number | boolean | undefined>;

export interface SpanNotes {
  set(attributes: Attributes): void;
  fail(reason: string): void;
}

const NO_NOTES: SpanNotes = { set: () => undefined, fail: () => undefined };

interface Tracing {
  api: typeof OtelApi;
  tracer: OtelApi.Tracer;
  flush(): Promise<void>;
}

let tracing: Tracing | undefined;
let status: TracingStatus | undefined;

/** What initTracing did, for the one start-up line saying where spans go (main.ts logs it). */
export interface TracingStatus {
  message: string;
  fields: Record<string, string | number>;
}

type Samplers = Pick<
  typeof import('@opentelemetry/sdk-trace'),
  'AlwaysOffSampler' | 'AlwaysOnSampler' | 'ParentBasedSampler' | 'TraceIdRatioBasedSampler'
>;

/** OTEL_TRACES_SAMPLER's six values, as the OpenTelemetry specification defines them. */
export function samplerFor(
  { sampler, ratio }: AppConfig['tracing']['sampling'],
  sdk: Samplers,
): import('@opentelemetry/sdk-trace').Sampler {
  const root = sampler.endsWith('always_on')
    ? new sdk.AlwaysOnSampler()
    : sampler.endsWith('always_off')
      ? new sdk.AlwaysOffSampler()
      : new sdk.TraceIdRatioBasedSampler(ratio);
  return sampler.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root;
}

/** Where the collector is, without the user and password a URL may carry. */
function tracesUrl(endpoint: string): string {
  const url = new URL('v1/traces', endpoint.replace(/\/?$/, '/'));
  url.username = '';
  url.password = '';
  return url.href;
}

/** Call it once per process, first thing in main; log what it returns. */
export function initTracing(config: AppConfig, app: string): TracingStatus {
  const { endpoint, serviceName, resourceAttributes, exportDelayMs, sampling } = config.tracing;
  if (status) return status;
  if (!endpoint) return (status = { message: 'tracing off: OTEL_EXPORTER_OTLP_ENDPOINT is not set', fields: {} });
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const api = require('@opentelemetry/api') as typeof OtelApi;
  const { AsyncLocalStorageContextManager } =
    require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const sdk = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  /* eslint-enable @typescript-eslint/no-require-imports */

  const url = new URL('v1/traces', endpoint.replace(/\/?$/, '/')).href;
  const exporter = new OTLPTraceExporter({ url });
  // OTEL_SERVICE_NAME wins over OTEL_RESOURCE_ATTRIBUTES's service.name, as the specification says.
  const service = serviceName ?? resourceAttributes['service.name'] ?? `petstore-${app}`;
  const version = packageVersion();
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({
      'service.version': version,
      ...resourceAttributes,
      'service.name': service,
    }),
    sampler: samplerFor(sampling, sdk),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter, scheduledDelayMillis: exportDelayMs })],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  tracing = { api, tracer: provider.getTracer('petstore', version), flush: () => provider.forceFlush() };
  const { sampler, ratio } = sampling;
  return (status = {
    message: `tracing: spans go to ${tracesUrl(endpoint)}`,
    fields: { service, version, sampler, ...(sampler.endsWith('traceidratio') && { ratio }) },
  });
}

export function tracingEnabled(): boolean {
  return tracing !== undefined;
}

/** The active span's ids, for the log line being written; undefined outside a span. */
export function activeSpanIds(): { trace_id: string; span_id: string } | undefined {
  const span = tracing?.api.trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

@Injectable()
export class TracingFlushService implements OnApplicationShutdown {
  async onApplicationShutdown(): Promise<void> {
    await tracing?.flush();
  }
}

export function currentTraceparent(): string | undefined {
  if (!tracing) return undefined;
  const carrier: { traceparent?: string } = {};
  tracing.api.propagation.inject(tracing.api.context.active(), carrier);
  return carrier.traceparent;
}

export function withSpan<T>(
  name: string,
  kind: SpanKindName,
  attributes: Attributes,
  fn: (notes: SpanNotes) => Promise<T>,
): Promise<T> {
  if (!tracing) return fn(NO_NOTES);
  const { api, tracer } = tracing;
  return tracer.startActiveSpan(name, { kind: spanKind(api, kind), attributes }, async (span) => {
    const notes: SpanNotes = {
      set: (more) => span.setAttributes(more),
      fail: (reason) => span.setStatus({ code: api.SpanStatusCode.ERROR, message: reason }),
    };
    try {
      return await fn(notes);
    } catch (err) {
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: (err as Error)?.message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Continues `traceparent`'s trace; with none (or a malformed one) starts a new trace. */
export function runInTrace<T>(
  traceparent: string | null | undefined,
  name: string,
  kind: SpanKindName,
  attributes: Attributes,
  fn: (notes: SpanNotes) => Promise<T>,
): Promise<T> {
  if (!tracing) return fn(NO_NOTES);
  const { api } = tracing;
  const parent = traceparent ? api.propagation.extract(api.ROOT_CONTEXT, { traceparent }) : api.ROOT_CONTEXT;
  return api.context.with(parent, () => withSpan(name, kind, attributes, fn));
}

/** The server span of one request, named for its route template; `next` runs in its context. */
export function traceHttpRequest(
  req: IncomingMessage,
  res: ServerResponse,
  route: string | undefined,
  next: () => void,
): void {
  if (!tracing) return next();
  const { api, tracer } = tracing;
  const parent = api.propagation.extract(api.ROOT_CONTEXT, req.headers);
  const span = tracer.startSpan(
    `${req.method} ${route ?? 'unmatched'}`,
    {
      kind: api.SpanKind.SERVER,
      attributes: { 'http.request.method': req.method, ...(route !== undefined && { 'http.route': route }) },
    },
    parent,
  );
  const ctx = api.trace.setSpan(parent, span);
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
    span.end();
  });
  // A body arrives in 'data' events, which run in the socket's context, not this one. Binding
  // patches the emitter's methods, so a GET (no body) skips it.
  if (req.headers['content-length'] || req.headers['transfer-encoding']) api.context.bind(ctx, req);
  api.context.with(ctx, next);
}

function spanKind(api: typeof OtelApi, kind: SpanKindName): OtelApi.SpanKind {
  return {
    server: api.SpanKind.SERVER,
    client: api.SpanKind.CLIENT,
    producer: api.SpanKind.PRODUCER,
    consumer: api.SpanKind.CONSUMER,
    internal: api.SpanKind.INTERNAL,
  }[kind];
}
