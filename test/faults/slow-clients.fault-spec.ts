import { request } from 'node:http';
import { maxMs, percentile, report, Sample } from './support/load';
import { RawExchange } from './support/raw-http';
import { createAccount, ServiceProcess, stopAll } from './support/service-process';

const databaseUrl = process.env.DATABASE_URL as string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TEN_MB = 10 * 1024 * 1024;

/** Sequential ordinary requests on fresh connections while the abuse goes on. */
async function probe(api: ServiceProcess, apiKey: string, count: number, pauseMs: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (let i = 0; i < count; i++) {
    const t = Date.now();
    const res = await fetch(`${api.url}/v1/account`, {
      headers: { Authorization: `Bearer ${apiKey}`, Connection: 'close' },
      signal: AbortSignal.timeout(5_000),
    });
    await res.text();
    samples.push({ at: t, ms: Date.now() - t, status: res.status });
    await sleep(pauseMs);
  }
  return samples;
}

/**
 * Announces a 10 MB JSON body, with Content-Length (sends nothing more before the answer) or chunked (sends 160 KB,
 * over the limit), then waits up to 2 s for the answer before sending the rest. A server that refuses closes the
 * socket with the body unread; a client still writing then may get EPIPE before it reads the 413 (seen in CI).
 */
function bigBody(
  api: ServiceProcess,
  apiKey: string,
  chunked: boolean,
): Promise<{ status: number; ms: number; code?: string }> {
  const t = Date.now();
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(`${api.url}/v1/keys`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${apiKey}`,
        'Content-Type': 'application/json',
        ...(chunked ? {} : { 'Content-Length': String(TEN_MB) }),
      },
    });
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const body = /^\{/.test(text) ? (JSON.parse(text) as { code?: string }) : {};
        resolve({ status: res.statusCode ?? 0, ms: Date.now() - t, code: body.code });
        req.destroy();
      });
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const prefix = '{"name":"';
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = prefix.length;
    const pump = (until: number): void => {
      while (sent < until && !answered) {
        const piece = chunk.subarray(0, Math.min(chunk.length, until - sent));
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', () => pump(until));
      }
      if (answered) return;
      if (sent < TEN_MB) return void setTimeout(() => pump(TEN_MB), 2_000);
      req.end();
    };
    if (chunked) {
      req.write(prefix);
      pump(160 * 1024);
    } else {
      req.flushHeaders();
      setTimeout(() => {
        if (answered) return;
        req.write(prefix);
        pump(TEN_MB);
      }, 2_000);
    }
  });
}

describe('faults: abusive clients do not hurt the others', () => {
  let api: ServiceProcess | undefined;
  let apiKey: string;

  beforeAll(async () => {
    ({ apiKey } = await createAccount(databaseUrl, 'faults slow clients'));
    api = await ServiceProcess.start('api');
  });
  afterAll(() => stopAll([api]));

  it('slowloris: 300 sockets trickling headers; others answer fast, the server drops the trickle within headersTimeout', async () => {
    const server = api as ServiceProcess;
    const baseline = await probe(server, apiKey, 20, 20);
    const opened = Date.now();
    const sockets = await Promise.all(
      Array.from({ length: 300 }, async () => {
        const x = await new RawExchange(server.port).connected();
        x.write(`GET /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
        return x;
      }),
    );
    let n = 0;
    const trickle = setInterval(() => {
      n++;
      for (const s of sockets) s.write(`X-Slow-${n}: ${n}\r\n`);
    }, 1_000);
    try {
      const during = await probe(server, apiKey, 40, 100);
      const closes = await Promise.all(sockets.map((s) => s.closed));
      const closedAfter = closes.map((c) => c.at - opened);
      const statuses = [...new Set(sockets.map((s) => s.status))];
      report('slowloris (300 sockets)', {
        baselineP50Ms: percentile(baseline, 50),
        duringP50Ms: percentile(during, 50),
        duringP99Ms: percentile(during, 99),
        duringMaxMs: maxMs(during),
        slowSocketsClosedWithinMs: Math.max(...closedAfter),
        slowSocketStatuses: statuses,
      });
      expect(during.every((s) => s.status === 200)).toBe(true);
      expect(maxMs(during)).toBeLessThan(1_000);
      // headersTimeout is 10 s, checked every second.
      expect(Math.max(...closedAfter)).toBeLessThan(13_000);
      expect(statuses).toEqual([408]);
      // In the Error model like every other answer, though Node refused them before the app saw them.
      const bodies = new Set(closes.map((c) => c.response.split('\r\n\r\n')[1]));
      expect([...bodies].map((b) => JSON.parse(b).code)).toEqual(['request_timeout']);
    } finally {
      clearInterval(trickle);
      for (const s of sockets) s.destroy();
    }
  });

  it('10 MB bodies get 413 payload_too_large at once, and others still answer fast', async () => {
    const server = api as ServiceProcess;
    // Awaited together: a refused big body would otherwise leave the probe running into afterAll's stop, and its
    // rejection would end Jest itself.
    const [big, during] = await Promise.all([
      Promise.all([true, false, true, false].map((chunked) => bigBody(server, apiKey, chunked))),
      probe(server, apiKey, 30, 50),
    ]);
    report('10 MB bodies', { answers: big, probeP99Ms: percentile(during, 99), probeMaxMs: maxMs(during) });
    for (const b of big) {
      expect(b).toEqual(expect.objectContaining({ status: 413, code: 'payload_too_large' }));
      expect(b.ms).toBeLessThan(2_000);
    }
    expect(during.every((s) => s.status === 200)).toBe(true);
    expect(maxMs(during)).toBeLessThan(1_000);
  });
});
