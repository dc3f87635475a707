import type { HttpResponse } from './http';

/** The X-RateLimit-* set and the IETF draft pair that every /v1 answer carries. */
export const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-used',
  'x-ratelimit-resource',
  'ratelimit',
  'ratelimit-policy',
];

/** An Error body `{code, message, status}` with no internals in it. */
export function expectErrorBody(
  res: Pick<HttpResponse<any>, 'status' | 'body' | 'headers'>,
  status: number,
  code: string,
) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toEqual(expect.objectContaining({ code, status, message: expect.any(String) }));
  expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js):\d+|SELECT|INSERT|node_modules/);
}

export function expectRateLimitHeaders(res: Pick<HttpResponse, 'headers'>) {
  const missing = RATE_LIMIT_HEADERS.filter((h) => res.headers.get(h) === null);
  expect(missing).toEqual([]);
}
