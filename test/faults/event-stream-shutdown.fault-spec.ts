import { SseClient } from '../support/sse-client';
import { createAccount, ServiceProcess, stopAll } from './support/service-process';

const databaseUrl = process.env.DATABASE_URL as string;

describe('faults: SIGTERM with an event stream open', () => {
  let api: ServiceProcess | undefined;
  afterEach(() => stopAll([api]));

  it('ends the stream at once with a retry hint, and the API exits 0 long before the grace period', async () => {
    const graceMs = 10_000;
    const { apiKey } = await createAccount(databaseUrl, 'faults stream shutdown');
    api = await ServiceProcess.start('api', { SHUTDOWN_GRACE_MS: String(graceMs) });
    const stream = await SseClient.open(api.url, apiKey);
    expect(stream.status).toBe(200);

    const exit = await api.signal('SIGTERM');
    await stream.waitFor(() => stream.ended, 1_000, 'the end of the stream');
    expect(stream.frames.at(-1)).toEqual(expect.objectContaining({ comment: 'shutdown', retry: 500 }));
    expect(exit.code).toBe(0);
    // Without SERVER_DRAINING the open stream held the drain until the grace period's forced close.
    expect(exit.ms).toBeLessThan(graceMs / 2);
  });
});
