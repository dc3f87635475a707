import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** One span as the OTLP/HTTP JSON encoding sends it, with its service. */
export interface ReceivedSpan {
  service: string;
  /** The resource's attributes (service.name, service.version, OTEL_RESOURCE_ATTRIBUTES's). */
  resource: Record<string, unknown>;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}

interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'service' | 'resource' | 'attributes'> & { attributes?: OtlpAttribute[] })[];
    }[];
  }[];
}

const attributes = (list: OtlpAttribute[] = []) =>
  Object.fromEntries(list.map((a) => [a.key, Object.values(a.value)[0]]));

/**
 * A local OTLP/HTTP trace collector on 127.0.0.1 (JSON encoding, `POST /v1/traces`): keeps the
 * spans, or with `keep: false` only counts them (a sink for the benchmark).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  received = 0;
  url = '';
  private server?: Server;

  constructor(private readonly keep = true) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest;
        for (const rs of body.resourceSpans ?? []) {
          const resource = attributes(rs.resource?.attributes);
          const service = String(resource['service.name']);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              this.received++;
              if (this.keep) this.spans.push({ ...s, service, resource, attributes: attributes(s.attributes) });
            }
          }
        }
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
