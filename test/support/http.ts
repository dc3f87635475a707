import { randomInt } from 'node:crypto';
import { contractFor } from './contract';

export interface HttpResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as-is (a string), for malformed-body tests. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/**
 * A tiny HTTP client over fetch for the e2e tests. Each client has its own client address
 * (X-Forwarded-For; test apps trust it) so per-address limits stay per test. Every exchange is
 * checked against the OpenAPI document the API serves (test/support/contract.ts): status,
 * headers and body of the answer, and the request against the answer; a violation throws
 * from the call, failing the test that made it.
 */
export class HttpClient {
  readonly clientIp = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

  constructor(
    readonly baseUrl: string,
    readonly defaultKey?: string,
  ) {}

  withKey(key: string): HttpClient {
    return new HttpClient(this.baseUrl, key);
  }

  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { 'X-Forwarded-For': this.clientIp, ...opts.headers };
    const key = opts.key ?? this.defaultKey;
    if (key && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))
      headers.Authorization = `Bearer ${key}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    // An event stream never ends by itself: its headers are the answer (test/support/sse-client.ts reads streams).
    const streaming = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
    const text = streaming ? (await res.body?.cancel(), '') : await res.text();
    let parsed: unknown = text;
    (await contractFor(this.baseUrl))?.assert({
      method,
      path,
      status: res.status,
      headers: res.headers,
      text,
      request: { headers: new Headers(headers), body },
    });
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('GET', path, opts);
  }
  post<T = any>(path: string, body?: unknown, opts: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...opts, body });
  }
  put<T = any>(path: string, body?: unknown, opts: RequestOptions = {}) {
    return this.request<T>('PUT', path, { ...opts, body });
  }
  patch<T = any>(path: string, body?: unknown, opts: RequestOptions = {}) {
    return this.request<T>('PATCH', path, { ...opts, body });
  }
  delete<T = any>(path: string, opts?: RequestOptions) {
    return this.request<T>('DELETE', path, opts);
  }
}

/**
 * How long something expected to happen may take: generous, since a wait that succeeds ends at
 * once, and a loaded 2-core machine (CI) has made 10 s too short.
 */
const EVENTUALLY_MS = 30_000;

/** Polls until check() returns a truthy value or the time runs out (then throws with the last value). */
export async function eventually<T>(
  check: () => Promise<T>,
  timeoutMs = EVENTUALLY_MS,
  intervalMs = 100,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last as NonNullable<T>;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
}
