import { loadConfig } from '@app/config';
import { WebhookReceiver } from '@app/testing';
import { WebhookSender } from './webhook-sender';

describe('WebhookSender (against a local receiver)', () => {
  // The timeout test's own 300 ms; the others a receiver on a loaded machine answers within (a 300 ms first
  // connection timed out once in a full run).
  const sender = (env: Record<string, string>) => new WebhookSender(loadConfig({ WEBHOOK_TIMEOUT_MS: '5000', ...env }));
  const receivers: WebhookReceiver[] = [];
  const receiver = async (respond?: (n: number) => number) => {
    const r = await new WebhookReceiver(respond).start();
    receivers.push(r);
    return r;
  };
  afterEach(async () => Promise.all(receivers.splice(0).map((r) => r.close())));

  it('POSTs the body and headers as given and reports a 2xx as delivered', async () => {
    const r = await receiver(() => 204);
    const result = await sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }).post(r.url, { 'X-Test': 'yes' }, '{"a":1}');
    expect(result).toEqual({ ok: true, statusCode: 204, error: null, durationMs: expect.any(Number), excerpt: '' });
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]).toEqual(expect.objectContaining({ method: 'POST', path: '/hook', body: '{"a":1}' }));
    expect(r.requests[0].headers['x-test']).toBe('yes');
  });

  it('refuses a loopback target at delivery time unless private URLs are allowed', async () => {
    const r = await receiver();
    const result = await sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'false' }).post(r.url, {}, '{}');
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/url refused/);
    expect(r.requests).toHaveLength(0);
  });

  it('sends every post to a destination checked once to its path, query and host', async () => {
    const r = await receiver(() => 204);
    const s = sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' });
    const destination = await s.destination(`${r.url}?k=v`);
    for (let i = 0; i < 2; i++) expect((await s.post(destination, {}, '{}')).ok).toBe(true);
    expect(r.requests.map((q) => [q.path, q.headers.host])).toEqual([
      ['/hook?k=v', new URL(r.url).host],
      ['/hook?k=v', new URL(r.url).host],
    ]);
  });

  it('sends nothing to a destination the check refused', async () => {
    const r = await receiver();
    const s = sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'false' });
    const result = await s.post(await s.destination(r.url), {}, '{}');
    expect(result).toEqual(
      expect.objectContaining({ ok: false, refused: true, error: expect.stringMatching(/url refused/) }),
    );
    expect(r.requests).toHaveLength(0);
  });

  it('does not follow redirects', async () => {
    const r = await receiver(() => 302);
    const result = await sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }).post(r.url, {}, '{}');
    expect(result).toEqual(expect.objectContaining({ ok: false, statusCode: 302, error: 'redirect not followed' }));
    expect(r.requests.map((q) => q.path)).toEqual(['/hook']);
  });

  it('gives up on a receiver slower than the timeout', async () => {
    const { createServer } = await import('node:http');
    const slow = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const port = (slow.address() as { port: number }).port;
    try {
      const started = Date.now();
      const result = await sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WEBHOOK_TIMEOUT_MS: '300' }).post(
        `http://127.0.0.1:${port}/`,
        {},
        '{}',
      );
      expect(result).toEqual(expect.objectContaining({ ok: false, statusCode: null, error: 'timeout', excerpt: null }));
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
  });

  it("keeps the answer's first KB and the attempt's duration", async () => {
    const r = await receiver(() => 500);
    r.answerBody = `${'é'.repeat(100)}${'x'.repeat(5000)}\0`;
    r.replyDelayMs = 50;
    const result = await sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }).post(r.url, {}, '{}');
    expect(result).toEqual(expect.objectContaining({ ok: false, statusCode: 500, error: 'HTTP 500' }));
    expect(result.excerpt).toBe(`${'é'.repeat(100)}${'x'.repeat(824)}`);
    expect(result.durationMs).toBeGreaterThanOrEqual(45);
    expect(result.durationMs).toBeLessThan(1000);
  });

  it('reports a refused connection', async () => {
    const r = await receiver();
    const url = r.url;
    await r.close();
    const result = await sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }).post(url, {}, '{}');
    expect(result).toEqual(expect.objectContaining({ ok: false, statusCode: null, error: 'ECONNREFUSED' }));
  });

  /** A receiver answering `status` with `answerBytes` of body, counting the connections it accepted. */
  const countingReceiver = async (answerBytes: number) => {
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Length': answerBytes }).end(Buffer.alloc(answerBytes)));
    });
    let connections = 0;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    const close = () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    };
    return { url, connections: () => connections, close };
  };

  it('sends successive deliveries to one receiver over one kept connection', async () => {
    const r = await countingReceiver(2);
    const s = sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' });
    try {
      for (let i = 0; i < 3; i++) expect((await s.post(r.url, {}, '{}')).ok).toBe(true);
      expect(r.connections()).toBe(1);
    } finally {
      await r.close();
    }
  });

  it('drops the connection of a receiver whose answer runs past the size cap', async () => {
    const r = await countingReceiver(1024 * 1024);
    const s = sender({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' });
    try {
      expect((await s.post(r.url, {}, '{}')).ok).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 200)); // time enough to read the whole answer
      expect((await s.post(r.url, {}, '{}')).ok).toBe(true);
      expect(r.connections()).toBe(2);
    } finally {
      await r.close();
    }
  });
});
