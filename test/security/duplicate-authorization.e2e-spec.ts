import { request } from 'node:http';
import { createAccount, RunningApi, startApi } from '../support/test-apps';

/**
 * Two Authorization headers are refused: if one silently won, a proxy that checks the other and
 * the service could disagree on who is calling.
 */
function send(
  url: string,
  authorization: string[],
): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    // An array value makes Node send one header line per element (fetch would join them).
    const req = request(
      `${url}/v1/account`,
      { headers: { Authorization: authorization, 'X-Forwarded-For': '10.9.8.7' } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('two Authorization headers', () => {
  let api: RunningApi;
  let key: string;
  let other: string;

  beforeAll(async () => {
    api = await startApi();
    [key, other] = (await Promise.all([createAccount(api), createAccount(api)])).map((a) => a.apiKey);
  });
  afterAll(() => api?.close());

  it('two valid keys of different accounts: 400, neither is used', async () => {
    const res = await send(api.url, [`Bearer ${key}`, `Bearer ${other}`]);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'malformed_request',
      status: 400,
      message: 'Send exactly one Authorization header',
      details: [{ field: 'Authorization', message: 'must be sent once' }],
    });
  });

  it('the same key twice: 400 too', async () => {
    expect((await send(api.url, [`Bearer ${key}`, `Bearer ${key}`])).status).toBe(400);
  });

  it('the answer is limited per client address like any unauthenticated one', async () => {
    const res = await send(api.url, [`Bearer ${key}`, 'Bearer nonsense']);
    expect(res.status).toBe(400);
    expect(res.headers['x-ratelimit-limit']).toBe('60');
  });

  it('one header still authenticates', async () => {
    expect((await send(api.url, [`Bearer ${key}`])).status).toBe(200);
  });
});
