import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as it arrived (signatures are over these bytes). */
  body: string;
}

/** A real HTTP receiver on 127.0.0.1; `respond(n)` picks the status of the n-th request (1-based). */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private server?: Server;

  constructor(private readonly respond: (n: number, req: ReceivedRequest) => number = () => 200) {}

  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.requests.push(received);
        const status = this.respond(this.requests.length, received);
        if (status >= 300 && status < 400) res.setHeader('Location', '/redirected');
        res.writeHead(status).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
