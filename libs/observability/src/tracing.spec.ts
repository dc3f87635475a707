import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { loadConfig } from '@app/config';
import { currentTraceparent, traceHttpRequest, initTracing, runInTrace, tracingEnabled, withSpan } from './tracing';

// Any load of OpenTelemetry fails the test: with tracing off none may happen, not even of the API.
jest.mock('@opentelemetry/api', () => {
  throw new Error('@opentelemetry/api loaded with tracing off');
});
jest.mock('@opentelemetry/context-async-hooks', () => {
  throw new Error('@opentelemetry/context-async-hooks loaded with tracing off');
});
jest.mock('@opentelemetry/core', () => {
  throw new Error('@opentelemetry/core loaded with tracing off');
});
jest.mock('@opentelemetry/resources', () => {
  throw new Error('@opentelemetry/resources loaded with tracing off');
});
jest.mock('@opentelemetry/sdk-trace', () => {
  throw new Error('@opentelemetry/sdk-trace loaded with tracing off');
});
jest.mock('@opentelemetry/exporter-trace-otlp-http', () => {
  throw new Error('@opentelemetry/exporter-trace-otlp-http loaded with tracing off');
});

describe('tracing with no OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  beforeAll(() => initTracing(loadConfig({}), 'api'));

  it('loads no OpenTelemetry module and reports itself off', () => {
    expect(initTracing(loadConfig({}), 'api')).toEqual({
      message: 'tracing off: OTEL_EXPORTER_OTLP_ENDPOINT is not set',
      fields: {},
    });
    expect(tracingEnabled()).toBe(false);
    expect(currentTraceparent()).toBeUndefined();
  });

  it('runs spans’ work as plain calls', async () => {
    await expect(withSpan('x', 'internal', {}, async () => 1)).resolves.toBe(1);
    await expect(
      runInTrace('00-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-01', 'y', 'consumer', {}, async () => 2),
    ).resolves.toBe(2);
  });

  it('the HTTP request trace only calls next', () => {
    const req = new IncomingMessage(new Socket());
    const next = jest.fn();
    traceHttpRequest(req, new ServerResponse(req), '/v1/pets', next);
    expect(next).toHaveBeenCalledTimes(1);
  });
});
