import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { verifyWebhook } from '@petstore/client';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as it arrived (signatures are over these bytes). */
  body: string;
}

/**
 * A real HTTP receiver on 127.0.0.1; `respond(n)` picks the status of the n-th request (1-based),
 * sent `delayMs` after the request arrived (a slow receiver).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private server?: Server;
  /** Answers not sent yet (slow receiver): dropped on close. */
  private readonly pending = new Set<NodeJS.Timeout>();

  constructor(private readonly respond: (n: number, req: ReceivedRequest) => number = () => 200) {}

  /** A slow receiver: each answer leaves this much later (a delivery the test keeps in flight). */
  replyDelayMs = 0;

  /** The body of every answer. */
  answerBody = 'ok';

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
        const answer = setTimeout(() => {
          this.pending.delete(answer);
          res.writeHead(status).end(this.answerBody);
        }, this.replyDelayMs);
        this.pending.add(answer);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      for (const answer of this.pending) clearTimeout(answer);
      if (!this.server) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}

/** Whether a delivery's Standard Webhooks signature checks out for `secret`, by the SDK's verifier (its own implementation). */
export function isSignedBy(
  secret: string,
  body: string,
  headers: IncomingHttpHeaders | Record<string, string>,
  toleranceSeconds = 300,
  now = new Date(),
): boolean {
  try {
    verifyWebhook({
      payload: body,
      headers: { ...headers, 'petstore-signature': undefined },
      secret,
      toleranceSeconds,
      now,
    });
    return true;
  } catch {
    return false;
  }
}
