import type {
  CallArgs,
  CallControl,
  CallInit,
  HttpMethod,
  ListItem,
  ListPath,
  PathFor,
  QueryOf,
  Success,
} from './operation-types';
import { EventStreamOptions, streamFrames } from './event-stream';
import { PetstoreError } from './petstore-error';
import type { WebFetch, WebHeaders } from './web-types';
import type * as M from './schema';

export interface PetstoreClientOptions {
  apiKey: string;
  /** Origin of the service, e.g. `https://petstore.example.com` (the SDK adds `/v1`). */
  baseUrl: string;
  /** Retries after the first attempt on 429, 502, 503 and 504 (and network errors and timeouts where a retry is safe). */
  maxRetries?: number;
  /** Longest wait before a retry; a Retry-After beyond it is not waited for (the error is thrown). */
  maxRetryDelayMs?: number;
  /** Milliseconds each attempt may take (answer and body) before it is given up: 60 s unless set. */
  timeout?: number;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  fetch?: WebFetch;
}

/** The rate-limit window the last answer described (X-RateLimit-*). */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** When that window resets. */
  reset: Date;
  resource: string | null;
}

/** `request()`'s options: any path, untyped query and body. */
export interface RequestOptions extends CallControl {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

export interface ApiResponse<T> {
  data: T;
  status: number;
  headers: WebHeaders;
}

type Query = RequestOptions['query'];
/** What `call()` reads from any operation's init, whatever its types. */
type LooseInit = CallControl & { path?: Record<string, string | number>; query?: Query; body?: unknown };
const NOT_JSON = Symbol('not JSON');
const BASE_DELAY_MS = 250;
/** An event stream is opened again no sooner than this after it ended, whatever the server's `retry:` says. */
export const STREAM_RETRY_FLOOR_MS = 1_000;
/** Longest wait before opening a stream again while connections keep ending at once. */
export const STREAM_RETRY_CAP_MS = 30_000;
/** A connection open this long was healthy: the next wait starts again from the server's hint. */
const STREAM_HEALTHY_MS = 30_000;

/**
 * A typed client of the Pet Store API. `call()` and `list()` reach every operation of openapi.json
 * (paths, filters, bodies and answers typed from it); the named methods are a facade over them.
 * Retries 429/503 (and, when repeating is safe, 502/504) after Retry-After or with backoff and
 * jitter, up to maxRetries and maxRetryDelayMs; sends an Idempotency-Key on creating POSTs so a retry
 * never does the work twice; follows `Link: rel="next"` on the base URL's origin only; throws
 * PetstoreError for non-2xx answers (a proxy's HTML page included); keeps the last rate-limit state.
 */
export class PetstoreClient {
  /** From the last answer received (undefined before the first). */
  rateLimit: RateLimitState | undefined;
  private readonly fetchFn: typeof fetch;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly timeout: number;
  private readonly origin: string;

  constructor(private readonly options: PetstoreClientOptions) {
    // Wrapped: a browser's fetch called as a method of another object throws "Illegal invocation".
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.maxRetries = options.maxRetries ?? 2;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.timeout = options.timeout ?? 60_000;
    this.origin = new URL(options.baseUrl).origin;
  }

  readonly pets = {
    list: (query?: QueryOf<'GET', '/pets'>, control?: CallControl) => this.list('/pets', { ...control, query }),
    create: (body: M.NewPet, control?: CallControl) =>
      this.dataOf('POST', '/pets', { ...control, body, idempotent: true }),
    /**
     * One pet, through GET /pets?ids= (the successor of GET /pets/{petId}). A pet that is not there (or is
     * another account's) is thrown as PetstoreError `not_found` (404), as every other `get` does.
     */
    get: async (id: number, control?: CallControl): Promise<M.Pet> => {
      const { data, headers } = await this.call('GET', '/pets', { ...control, query: { ids: String(id) } });
      const [pet] = data;
      if (pet === undefined) throw new PetstoreError(404, { code: 'not_found', message: 'Pet not found' }, headers);
      return pet;
    },
    /**
     * One pet through GET /pets/{petId}, whose answer carries the pet's ETag.
     * @deprecated The operation is sunset on 2027-06-30 (410 endpoint_sunset after): use `get()`.
     */
    getById: (id: number, control?: CallControl) =>
      this.dataOf('GET', '/pets/{petId}', { ...control, path: { petId: id } }),
    update: (id: number, body: M.PetUpdate, control?: CallControl) =>
      this.dataOf('PATCH', '/pets/{petId}', { ...control, path: { petId: id }, body }),
    delete: (id: number, control?: CallControl) =>
      this.dataOf('DELETE', '/pets/{petId}', { ...control, path: { petId: id } }),
  };

  readonly categories = {
    list: (query?: QueryOf<'GET', '/categories'>, control?: CallControl) =>
      this.list('/categories', { ...control, query }),
    create: (body: M.NewCategory, control?: CallControl) =>
      this.dataOf('POST', '/categories', { ...control, body, idempotent: true }),
    get: (id: number, control?: CallControl) =>
      this.dataOf('GET', '/categories/{categoryId}', { ...control, path: { categoryId: id } }),
    update: (id: number, body: M.CategoryUpdate, control?: CallControl) =>
      this.dataOf('PATCH', '/categories/{categoryId}', { ...control, path: { categoryId: id }, body }),
    delete: (id: number, control?: CallControl) =>
      this.dataOf('DELETE', '/categories/{categoryId}', { ...control, path: { categoryId: id } }),
  };

  readonly orders = {
    list: (query?: QueryOf<'GET', '/store/orders'>, control?: CallControl) =>
      this.list('/store/orders', { ...control, query }),
    place: (body: M.NewOrder, control?: CallControl) =>
      this.dataOf('POST', '/store/orders', { ...control, body, idempotent: true }),
    get: (id: number, control?: CallControl) =>
      this.dataOf('GET', '/store/orders/{orderId}', { ...control, path: { orderId: id } }),
    cancel: (id: number, control?: CallControl) =>
      this.dataOf('DELETE', '/store/orders/{orderId}', { ...control, path: { orderId: id } }),
  };

  readonly inventory = {
    list: (query?: QueryOf<'GET', '/store/inventory'>, control?: CallControl) =>
      this.list('/store/inventory', { ...control, query }),
    get: (petId: number, control?: CallControl) =>
      this.dataOf('GET', '/store/inventory/{petId}', { ...control, path: { petId } }),
    update: (petId: number, body: M.InventoryUpdate, control?: CallControl) =>
      this.dataOf('PUT', '/store/inventory/{petId}', { ...control, path: { petId }, body }),
  };

  readonly messages = {
    list: (query?: QueryOf<'GET', '/messages'>, control?: CallControl) => this.list('/messages', { ...control, query }),
    create: (body: M.NewMessage, control?: CallControl) =>
      this.dataOf('POST', '/messages', { ...control, body, idempotent: true }),
    get: (id: string, control?: CallControl) => this.dataOf('GET', '/messages/{id}', { ...control, path: { id } }),
  };

  readonly events = {
    list: (query?: QueryOf<'GET', '/events'>, control?: CallControl) => this.list('/events', { ...control, query }),
    /**
     * The account's events as they happen (GET /events/stream), for as long as the loop runs: when the
     * connection drops or the server ends it, it reconnects by itself with the last id received, so no
     * event is missed or repeated. `break` or `signal` ends it.
     */
    stream: (options: EventStreamOptions = {}) => this.followEvents(options),
  };

  readonly webhooks = {
    list: (control?: CallControl) => this.dataOf('GET', '/webhooks', control),
    create: (body: M.NewWebhook, control?: CallControl) =>
      this.dataOf('POST', '/webhooks', { ...control, body, idempotent: true }),
    get: (id: number, control?: CallControl) =>
      this.dataOf('GET', '/webhooks/{webhookId}', { ...control, path: { webhookId: id } }),
    update: (id: number, body: M.WebhookUpdate, control?: CallControl) =>
      this.dataOf('PATCH', '/webhooks/{webhookId}', { ...control, path: { webhookId: id }, body }),
    /** A new secret (in the answer only); the old one also signs deliveries for `gracePeriodSeconds`. */
    rotate: (id: number, body: M.RotateWebhookSecret = {}, control?: CallControl) =>
      this.dataOf('POST', '/webhooks/{webhookId}/rotate', {
        ...control,
        path: { webhookId: id },
        body,
        idempotent: true,
      }),
    /** Sends a delivery's event again (same webhook-id), as a new delivery. */
    resend: (id: number, deliveryId: number, control?: CallControl) =>
      this.dataOf('POST', '/webhooks/{webhookId}/deliveries/{deliveryId}/resend', {
        ...control,
        path: { webhookId: id, deliveryId },
        idempotent: true,
      }),
    /** After an outage: each event whose deliveries since `since` all failed, sent once more; re-enables the webhook. */
    recover: (id: number, body: M.RecoverWebhook, control?: CallControl) =>
      this.dataOf('POST', '/webhooks/{webhookId}/recover', {
        ...control,
        path: { webhookId: id },
        body,
        idempotent: true,
      }),
    delete: (id: number, control?: CallControl) =>
      this.dataOf('DELETE', '/webhooks/{webhookId}', { ...control, path: { webhookId: id } }),
    enable: (id: number, control?: CallControl) =>
      this.dataOf('POST', '/webhooks/{webhookId}/enable', { ...control, path: { webhookId: id } }),
    test: (id: number, control?: CallControl) =>
      this.dataOf('POST', '/webhooks/{webhookId}/test', { ...control, path: { webhookId: id } }),
    deliveries: (id: number, query?: QueryOf<'GET', '/webhooks/{webhookId}/deliveries'>, control?: CallControl) =>
      this.list('/webhooks/{webhookId}/deliveries', { ...control, path: { webhookId: id }, query }),
    /** Every attempt made to send a delivery (status, duration, the answer's first 1 KB, error), oldest first. */
    attempts: (
      id: number,
      deliveryId: number,
      query?: QueryOf<'GET', '/webhooks/{webhookId}/deliveries/{deliveryId}/attempts'>,
      control?: CallControl,
    ) =>
      this.list('/webhooks/{webhookId}/deliveries/{deliveryId}/attempts', {
        ...control,
        path: { webhookId: id, deliveryId },
        query,
      }),
  };

  readonly keys = {
    list: (control?: CallControl) => this.dataOf('GET', '/keys', control),
    create: (body: M.NewApiKey, control?: CallControl) =>
      this.dataOf('POST', '/keys', { ...control, body, idempotent: true }),
    revoke: (id: number, control?: CallControl) =>
      this.dataOf('DELETE', '/keys/{keyId}', { ...control, path: { keyId: id } }),
    rotate: (id: number, body: M.RotateApiKey = {}, control?: CallControl) =>
      this.dataOf('POST', '/keys/{keyId}/rotate', { ...control, path: { keyId: id }, body, idempotent: true }),
  };

  readonly account = {
    get: (control?: CallControl) => this.dataOf('GET', '/account', control),
    rateLimit: (control?: CallControl) => this.dataOf('GET', '/rate_limit', control),
    /** Requests admitted, refused and bans per bucket (experimental). */
    usage: (query?: M.UsageQuery, control?: CallControl) => this.dataOf('GET', '/usage', { ...control, query }),
  };

  /**
   * Any operation of the document by method and path (as in openapi.json, without `/v1`), its
   * path parameters, query and body typed from it: `call('PATCH', '/categories/{categoryId}', { path: { categoryId: 1 }, body })`.
   */
  async call<Method extends HttpMethod, P extends PathFor<Method>>(
    method: Method,
    path: P,
    ...[init]: CallArgs<Method, P>
  ): Promise<ApiResponse<Success<Method, P>>> {
    const { path: params, ...options } = (init ?? {}) as LooseInit;
    return this.request(method, `/v1${withParams(path, params)}`, options);
  }

  /** Every item of every page of a listing, typed: `list('/pets', { query: { status: 'available' } })`. */
  list<P extends ListPath>(path: P, ...[init]: CallArgs<'GET', P>): AsyncGenerator<ListItem<P>, void, undefined> {
    const { path: params, query, ...control } = (init ?? {}) as LooseInit;
    return this.paginate(`/v1${withParams(path, params)}`, query, control);
  }

  /** The body of a successful answer, by any path (`/v1/...`), untyped: prefer `call()`. */
  async data<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
    return (await this.request<T>(method, path, options)).data;
  }

  /**
   * Every item of every page, fetching the next page (`Link: rel="next"`) when the current one is used up.
   * A Link to another origin than the base URL's is refused (PetstoreError `cross_origin_link`): it would get the API key.
   */
  async *paginate<T>(path: string, query?: Query, control: CallControl = {}): AsyncGenerator<T, void, undefined> {
    let url = this.url(path, query);
    for (;;) {
      const page = await this.send<T[]>('GET', url, control);
      yield* page.data;
      const next = nextLink(page.headers.get('link'));
      if (next === null) return;
      url = new URL(next, url); // the Link carries the filters and the cursor
      if (url.origin !== this.origin) {
        const message = `Refused to follow Link: rel="next" to ${url.origin}, not the base URL's origin ${this.origin}`;
        throw new PetstoreError(page.status, { code: 'cross_origin_link', message }, page.headers);
      }
    }
  }

  /** One logical call by any path (`/v1/...`), untyped: retried per Retry-After, with the same Idempotency-Key on each attempt. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.send<T>(method, this.url(path, options.query), options);
  }

  private async *followEvents(options: EventStreamOptions): AsyncGenerator<M.Event, void, undefined> {
    const { signal } = options;
    let lastId = options.after;
    let retryMs = STREAM_RETRY_FLOOR_MS;
    // Streams that ended soon after they opened, in a row: each doubles the wait before the next.
    let quickEnds = 0;
    for (let failures = 0; ;) {
      signal?.throwIfAborted();
      const url = this.url('/v1/events/stream', { type: options.types?.join(',') || undefined });
      const headers = new Headers(this.options.headers);
      headers.set('Authorization', `Bearer ${this.options.apiKey}`);
      headers.set('Accept', 'text/event-stream');
      if (lastId !== undefined) headers.set('Last-Event-ID', String(lastId));
      // Its own controller: leaving the loop early closes the connection.
      const connection = new AbortController();
      const onAbort = () => connection.abort(signal!.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const response = await this.fetchFn(url, { headers, signal: connection.signal });
        this.rateLimit = rateLimitOf(response.headers) ?? this.rateLimit;
        if (!response.ok || !response.body) {
          const text = await response.text();
          const parsed = text ? parseJson(text) : undefined;
          const error =
            parsed !== NOT_JSON && typeof parsed === 'object' && parsed !== null
              ? new PetstoreError(response.status, parsed, response.headers)
              : PetstoreError.fromText(response.status, text, response.headers);
          const delay = this.backoff(failures++, error.retryAfter);
          if (![429, 502, 503, 504].includes(response.status) || delay > this.maxRetryDelayMs) throw error;
          await sleep(delay, signal);
          continue;
        }
        failures = 0;
        options.onOpen?.();
        const openedAt = Date.now();
        for await (const frame of streamFrames(response.body)) {
          if (frame.retry !== undefined) retryMs = Math.max(STREAM_RETRY_FLOOR_MS, frame.retry);
          if (frame.id !== undefined && /^\d+$/.test(frame.id)) lastId = Number(frame.id);
          if (frame.data === undefined) continue;
          // The server's last word on a stream whose key stopped working: no resuming with that key.
          if (frame.event === 'error') {
            const body = JSON.parse(frame.data) as M.ErrorBody;
            throw new PetstoreError(body.status, body, response.headers);
          }
          yield JSON.parse(frame.data) as M.Event;
        }
        // The server ended the stream (shutdown, a client too far behind): back after its retry hint, and later each
        // time a stream ends at once (a server that ends every stream cannot make clients reconnect in a loop).
        quickEnds = Date.now() - openedAt >= STREAM_HEALTHY_MS ? 0 : quickEnds + 1;
        const wait = Math.min(STREAM_RETRY_CAP_MS, retryMs * 2 ** Math.max(0, quickEnds - 1));
        await sleep(Math.round(wait * (1 + Math.random() * 0.5)), signal);
      } catch (err) {
        signal?.throwIfAborted();
        if (err instanceof PetstoreError) throw err;
        // A dropped connection: again from the last id, with backoff, for as long as the loop runs.
        await sleep(Math.min(this.backoff(failures++, null), this.maxRetryDelayMs), signal);
      } finally {
        signal?.removeEventListener('abort', onAbort);
        connection.abort();
      }
    }
  }

  /** `call()`'s body alone, for the named methods. */
  private async dataOf<Method extends HttpMethod, P extends PathFor<Method>>(
    method: Method,
    path: P,
    init: CallInit<Method, P> | undefined,
  ): Promise<Success<Method, P>> {
    return (await this.call(method, path, ...([init] as CallArgs<Method, P>))).data;
  }

  private url(path: string, query: Query): URL {
    const url = new URL(path, this.options.baseUrl);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  private async send<T>(method: string, url: URL, options: RequestOptions): Promise<ApiResponse<T>> {
    const headers = new Headers(this.options.headers);
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
    headers.set('Authorization', `Bearer ${this.options.apiKey}`);
    headers.set('Accept', 'application/json');
    if (options.body !== undefined) headers.set('Content-Type', 'application/json');
    if (options.idempotent && !headers.has('idempotency-key'))
      headers.set('Idempotency-Key', globalThis.crypto.randomUUID());
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    // Repeating a request whose answer was lost is safe only when it cannot do the work twice.
    const safeToRepeat = method === 'GET' || headers.has('idempotency-key');
    const { signal } = options;
    const timeout = options.timeout ?? this.timeout;

    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const deadline = AbortSignal.timeout(timeout);
      const attemptSignal = signal ? AbortSignal.any([signal, deadline]) : deadline;
      let response: Response;
      let text: string;
      try {
        // Raced as well: a custom fetch may ignore the signal.
        response = await raced(this.fetchFn(url, { method, headers, body, signal: attemptSignal }), attemptSignal);
        text = await raced(response.text(), attemptSignal);
      } catch (err) {
        signal?.throwIfAborted();
        const failure = deadline.aborted ? deadline.reason : err;
        if (!safeToRepeat || attempt >= this.maxRetries) throw failure;
        await sleep(this.backoff(attempt, null), signal);
        continue;
      }
      this.rateLimit = rateLimitOf(response.headers) ?? this.rateLimit;
      const parsed = text ? parseJson(text) : undefined;
      if (response.ok && parsed !== NOT_JSON)
        return { data: parsed as T, status: response.status, headers: response.headers };
      const error =
        parsed !== NOT_JSON && typeof parsed === 'object' && parsed !== null
          ? new PetstoreError(response.status, parsed, response.headers)
          : PetstoreError.fromText(response.status, text, response.headers);
      // 429 and 503 come before any work; a 502 or 504 may come after it.
      const retryable = [429, 503].includes(response.status) || ([502, 504].includes(response.status) && safeToRepeat);
      const delay = this.backoff(attempt, error.retryAfter);
      if (!retryable || attempt >= this.maxRetries || delay > this.maxRetryDelayMs) throw error;
      await sleep(delay, signal);
    }
  }

  /** Retry-After (seconds) when given, else exponential from 250 ms; plus up to 20% jitter so clients spread out. */
  private backoff(attempt: number, retryAfterSeconds: number | null): number {
    const base = retryAfterSeconds !== null ? retryAfterSeconds * 1000 : BASE_DELAY_MS * 2 ** attempt;
    return Math.round(base * (1 + Math.random() * 0.2));
  }
}

/** `/pets/{petId}` with its parameters filled in (encoded). */
function withParams(path: string, params: Record<string, string | number> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (params[name] === undefined) throw new TypeError(`${path} needs the path parameter ${name}`);
    return encodeURIComponent(String(params[name]));
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/** The promise, or the signal's reason as soon as it aborts. */
function raced<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

// Web APIs only (global crypto, setTimeout, AbortSignal), so the client runs in browsers too (the console uses it).
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    signal?.throwIfAborted();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
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
    const [, target, params] = /^\s*<([^>]*)>\s*;(.*)$/.exec(part) ?? [];
    if (target !== undefined && params !== undefined && /(^|;)\s*rel="?next"?\s*(;|$)/.test(params)) return target;
  }
  return null;
}
