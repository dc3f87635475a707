import { PetstoreError } from './petstore-error';
import type * as M from './schema';

export interface PetstoreClientOptions {
  apiKey: string;
  /** Origin of the service, e.g. `https://petstore.example.com` (the SDK adds `/v1`). */
  baseUrl: string;
  /** Retries after the first attempt on 429 and 503 (and network errors where a retry is safe). */
  maxRetries?: number;
  /** Longest wait before a retry; a Retry-After beyond it is not waited for (the error is thrown). */
  maxRetryDelayMs?: number;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/** The rate-limit window the last answer described (X-RateLimit-*). */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** When that window resets. */
  reset: Date;
  resource: string | null;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send an Idempotency-Key (one per call, the same on each retry of that call). */
  idempotent?: boolean;
}

export interface ApiResponse<T> {
  data: T;
  status: number;
  headers: Headers;
}

type Query = RequestOptions['query'];
// Web APIs only (global crypto, setTimeout), so the client runs in browsers too (the console uses it).
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const randomUUID = () => globalThis.crypto.randomUUID();
const RETRYABLE = new Set([429, 503]);
const BASE_DELAY_MS = 250;

/**
 * A typed client of the Pet Store API: retries 429/503 after Retry-After (with jitter, up to
 * maxRetries and maxRetryDelayMs), sends an Idempotency-Key on creating POSTs so a retry never
 * does the work twice, iterates keyset pages by following `Link: rel="next"`, throws PetstoreError
 * for non-2xx answers, and keeps the rate-limit state of the last answer in `rateLimit`.
 */
export class PetstoreClient {
  /** From the last answer received (undefined before the first). */
  rateLimit: RateLimitState | undefined;
  private readonly fetchFn: typeof fetch;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;

  constructor(private readonly options: PetstoreClientOptions) {
    // Wrapped: a browser's fetch called as a method of another object throws "Illegal invocation".
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.maxRetries = options.maxRetries ?? 2;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
  }

  readonly pets = {
    list: (query?: Query) => this.paginate<M.Pet>('/v1/pets', query),
    create: (body: M.NewPet) => this.data<M.Pet>('POST', '/v1/pets', { body, idempotent: true }),
    get: async (id: number) => (await this.data<M.Pet[]>('GET', '/v1/pets', { query: { ids: id } }))[0],
    update: (id: number, body: M.PetUpdate) => this.data<M.Pet>('PATCH', `/v1/pets/${id}`, { body }),
    delete: (id: number) => this.data<void>('DELETE', `/v1/pets/${id}`),
  };

  readonly categories = {
    list: (query?: Query) => this.paginate<M.Category>('/v1/categories', query),
    create: (body: M.NewCategory) => this.data<M.Category>('POST', '/v1/categories', { body, idempotent: true }),
    get: (id: number) => this.data<M.Category>('GET', `/v1/categories/${id}`),
    delete: (id: number) => this.data<void>('DELETE', `/v1/categories/${id}`),
  };

  readonly orders = {
    list: (query?: Query) => this.paginate<M.Order>('/v1/store/orders', query),
    place: (body: M.NewOrder) => this.data<M.Order>('POST', '/v1/store/orders', { body, idempotent: true }),
    get: (id: number) => this.data<M.Order>('GET', `/v1/store/orders/${id}`),
    cancel: (id: number) => this.data<void>('DELETE', `/v1/store/orders/${id}`),
  };

  readonly inventory = {
    list: (query?: Query) => this.paginate<M.InventoryItem>('/v1/store/inventory', query),
    get: (petId: number) => this.data<M.InventoryItem>('GET', `/v1/store/inventory/${petId}`),
  };

  readonly messages = {
    list: (query?: Query) => this.paginate<M.MessageDetail>('/v1/messages', query),
    create: (body: M.NewMessage) => this.data<M.Message>('POST', '/v1/messages', { body, idempotent: true }),
    get: (id: string) => this.data<M.MessageDetail>('GET', `/v1/messages/${encodeURIComponent(id)}`),
  };

  readonly events = {
    list: (query?: Query) => this.paginate<M.Event>('/v1/events', query),
  };

  readonly webhooks = {
    list: () => this.data<M.Webhook[]>('GET', '/v1/webhooks'),
    create: (body: M.NewWebhook) => this.data<M.CreatedWebhook>('POST', '/v1/webhooks', { body, idempotent: true }),
    get: (id: number) => this.data<M.Webhook>('GET', `/v1/webhooks/${id}`),
    update: (id: number, body: M.WebhookUpdate) => this.data<M.Webhook>('PATCH', `/v1/webhooks/${id}`, { body }),
    /** A new secret (in the answer only); the old one also signs deliveries for `gracePeriodSeconds`. */
    rotate: (id: number, body: M.RotateWebhookSecret = {}) =>
      this.data<M.CreatedWebhook>('POST', `/v1/webhooks/${id}/rotate`, { body, idempotent: true }),
    /** Sends a delivery's event again (same webhook-id), as a new delivery. */
    resend: (id: number, deliveryId: number) =>
      this.data<M.Delivery>('POST', `/v1/webhooks/${id}/deliveries/${deliveryId}/resend`, { idempotent: true }),
    delete: (id: number) => this.data<void>('DELETE', `/v1/webhooks/${id}`),
    enable: (id: number) => this.data<M.Webhook>('POST', `/v1/webhooks/${id}/enable`),
    test: (id: number) => this.data<M.Delivery>('POST', `/v1/webhooks/${id}/test`),
    deliveries: (id: number, query?: Query) => this.paginate<M.Delivery>(`/v1/webhooks/${id}/deliveries`, query),
  };

  readonly keys = {
    list: () => this.data<M.ApiKey[]>('GET', '/v1/keys'),
    create: (body: M.NewApiKey) => this.data<M.IssuedApiKey>('POST', '/v1/keys', { body, idempotent: true }),
    revoke: (id: number) => this.data<void>('DELETE', `/v1/keys/${id}`),
    rotate: (id: number, body: M.RotateApiKey = {}) =>
      this.data<M.IssuedApiKey>('POST', `/v1/keys/${id}/rotate`, { body, idempotent: true }),
  };

  readonly account = {
    get: () => this.data<M.Account>('GET', '/v1/account'),
    rateLimit: () => this.data<M.RateLimitStatus>('GET', '/v1/rate_limit'),
    /** Requests admitted, refused and bans per bucket (experimental). */
    usage: (query?: M.UsageQuery) => this.data<M.Usage>('GET', '/v1/usage', { query: { ...query } }),
  };

  /** The body of a successful answer. */
  async data<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
    return (await this.request<T>(method, path, options)).data;
  }

  /** Every item of every page, fetching the next page (`Link: rel="next"`) when the current one is used up. */
  async *paginate<T>(path: string, query?: Query): AsyncGenerator<T, void, undefined> {
    let next: string | null = path;
    let pageQuery = query;
    while (next) {
      const page: ApiResponse<T[]> = await this.request<T[]>('GET', next, { query: pageQuery });
      yield* page.data;
      next = nextLink(page.headers.get('link'));
      pageQuery = undefined; // the Link carries the filters and the cursor
    }
  }

  /** One logical call: retried on 429/503 per Retry-After, with the same Idempotency-Key on each attempt. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = new URL(path, this.options.baseUrl);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      ...this.options.headers,
      ...options.headers,
      Authorization: `Bearer ${this.options.apiKey}`,
      Accept: 'application/json',
    };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    if (options.idempotent) headers['Idempotency-Key'] ??= randomUUID();
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    // A network error is retried only when repeating the request cannot do the work twice.
    const safeToRepeat = method === 'GET' || 'Idempotency-Key' in headers;

    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetchFn(url, { method, headers, body });
      } catch (err) {
        if (!safeToRepeat || attempt >= this.maxRetries) throw err;
        await sleep(this.backoff(attempt, null));
        continue;
      }
      this.rateLimit = rateLimitOf(response.headers) ?? this.rateLimit;
      const text = await response.text();
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      if (response.ok) return { data: parsed as T, status: response.status, headers: response.headers };
      const error = new PetstoreError(response.status, parsed as M.ErrorBody | undefined, response.headers);
      const delay = this.backoff(attempt, error.retryAfter);
      if (!RETRYABLE.has(response.status) || attempt >= this.maxRetries || delay > this.maxRetryDelayMs) throw error;
      await sleep(delay);
    }
  }

  /** Retry-After (seconds) when given, else exponential from 250 ms; plus up to 20% jitter so clients spread out. */
  private backoff(attempt: number, retryAfterSeconds: number | null): number {
    const base = retryAfterSeconds !== null ? retryAfterSeconds * 1000 : BASE_DELAY_MS * 2 ** attempt;
    return Math.round(base * (1 + Math.random() * 0.2));
  }
}

function rateLimitOf(headers: Headers): RateLimitState | undefined {
  const limit = headers.get('x-ratelimit-limit');
  const remaining = headers.get('x-ratelimit-remaining');
  const reset = headers.get('x-ratelimit-reset');
  if (limit === null || remaining === null || reset === null) return undefined;
  return {
    limit: Number(limit),
    remaining: Number(remaining),
    reset: new Date(Number(reset) * 1000),
    resource: headers.get('x-ratelimit-resource'),
  };
}

/** The target of `rel="next"` in a Link header (RFC 8288), or null. */
export function nextLink(link: string | null): string | null {
  for (const part of link?.split(',') ?? []) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(^|;)\s*rel="?next"?\s*(;|$)/.test(match[2])) return match[1];
  }
  return null;
}
