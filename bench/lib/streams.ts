import { Agent, ClientRequest, request } from 'node:http';
import { paced, percentile } from './paced';
import { rssMb, sleep } from './proc';

/** A key's concurrent streams on Enterprise (PLAN_STREAMS): the streams are spread over keys of this many each. */
export const STREAMS_PER_KEY = 100;

export interface StreamRows {
  streams: number;
  accounts: number;
  rate: number;
  durationS: number;
  events: number;
  /** Events each stream should have had: those of its account. */
  expected: number;
  received: number;
  p50: number;
  p99: number;
  max: number;
  rssBeforeMb: number;
  rssOpenMb: number;
  rssAfterMb: number;
  postFailures: number;
}

/**
 * `streams` GET /v1/events/stream (pet.created), STREAMS_PER_KEY per account; pets created at `rate`/s over the
 * accounts in turn. Latency: receipt at the client minus the event's createdAt (its transaction's start, on the same
 * host's clock), so it includes the POST's own commit.
 */
export async function streamFanOut(o: {
  apiUrl: string;
  apiPid: number;
  /** An API key per account, and a category of that account for its pets. */
  accounts: { apiKey: string; categoryId: number }[];
  streams: number;
  rate: number;
  durationS: number;
  log: (msg: string) => void;
}): Promise<StreamRows> {
  const base = new URL(o.apiUrl);
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const latencies: number[] = [];
  const open: ClientRequest[] = [];
  let received = 0;
  let measuring = false;
  await sleep(1_000);
  const rssBeforeMb = rssMb(o.apiPid);

  const openStream = (key: string) =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          path: '/v1/events/stream?type=pet.created',
          headers: { Authorization: `Bearer ${key}`, Accept: 'text/event-stream' },
        },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
          resolve();
          let buffered = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const at = Date.now();
            buffered += chunk;
            const end = buffered.lastIndexOf('\n\n');
            if (end < 0) return;
            const complete = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            // Only `data:` lines of events carry createdAt; heartbeats are comments.
            for (const m of complete.matchAll(/"createdAt":"([^"]+)"/g)) {
              if (!measuring) continue;
              received++;
              latencies.push(at - Date.parse(m[1]));
            }
          });
          res.on('error', () => undefined);
        },
      );
      req.on('error', reject);
      req.end();
      open.push(req);
    });

  o.log(`opening ${o.streams} event streams over ${o.accounts.length} accounts`);
  for (let i = 0; i < o.streams; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, o.streams - i) }, (_, j) =>
        openStream(o.accounts[(i + j) % o.accounts.length].apiKey),
      ),
    );
  await sleep(2_000);
  const rssOpenMb = rssMb(o.apiPid);

  o.log(`creating pets at ${o.rate}/s for ${o.durationS} s across the accounts`);
  measuring = true;
  let next = 0;
  const posted = await paced(
    {
      url: `${o.apiUrl}/v1/pets`,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      next: () => {
        const a = o.accounts[next++ % o.accounts.length];
        return {
          headers: { Authorization: `Bearer ${a.apiKey}` },
          body: JSON.stringify({ name: 'streamed', categoryId: a.categoryId }),
        };
      },
    },
    o.rate,
    o.durationS,
    200,
  );
  await sleep(2_000);
  measuring = false;
  const rssAfterMb = rssMb(o.apiPid);
  for (const req of open) req.destroy();
  agent.destroy();

  const perAccount = o.streams / o.accounts.length;
  return {
    streams: o.streams,
    accounts: o.accounts.length,
    rate: o.rate,
    durationS: o.durationS,
    events: posted.ok,
    expected: posted.ok * perAccount,
    received,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
    rssBeforeMb,
    rssOpenMb,
    rssAfterMb,
    postFailures: posted.failures,
  };
}
