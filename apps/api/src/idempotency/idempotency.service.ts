import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiError } from '@app/errors';
import { IdempotencyStore, StoredResponse } from './idempotency.store';
import { IDEMPOTENCY_HEADER, readIdempotencyKey, requestFingerprint } from './request-fingerprint';

type Headers = Record<string, string>;

const HEADER_KEY = IDEMPOTENCY_HEADER.toLowerCase();

function headerSnapshot(res: FastifyReply): Headers {
  return Object.fromEntries(
    Object.entries(res.getHeaders())
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
  );
}

/** Not those of the gate (rate limit, request id). */
function headersAddedSince(res: FastifyReply, before: Headers): Headers {
  return Object.fromEntries(Object.entries(headerSnapshot(res)).filter(([k, v]) => before[k] !== v));
}

// Behaviour in docs/messages-and-idempotency.md. 400s (nothing was done) and 5xx are not stored,
// so the key can be used again. A call in the handler, not an interceptor: a request without the
// header pays nothing.
@Injectable()
export class IdempotencyService {
  constructor(private readonly store: IdempotencyStore) {}

  /**
   * Not async: a request without the header (most) waits on no promise or suspended frame of this service's.
   * `authorize`: the checks `work` makes of the API key, passed (or their error thrown) before another key's answer replays.
   */
  run<T>(res: FastifyReply, work: () => Promise<T>, authorize?: () => Promise<unknown>): Promise<T> {
    return res.request.headers[HEADER_KEY] === undefined ? work() : this.runOnce(res, work, authorize);
  }

  private async runOnce<T>(res: FastifyReply, work: () => Promise<T>, authorize?: () => Promise<unknown>): Promise<T> {
    const req = res.request;
    const key = readIdempotencyKey(req.headers[HEADER_KEY]);
    const auth = res.request.auth;
    if (key === undefined || !auth) return work();

    const fingerprint = requestFingerprint(req.method, req.url, req.body);
    const claim = await this.store.claim(auth.accountId, key, fingerprint, auth.keyId);
    if (claim.kind === 'unavailable') return work();
    if (claim.kind !== 'acquired') {
      if (claim.fingerprint !== fingerprint) {
        throw new ApiError(
          'idempotency_key_reused',
          `This ${IDEMPOTENCY_HEADER} was used with another method, path or body; use a new key`,
        );
      }
      if (claim.kind === 'in_flight') {
        throw new ApiError(
          'idempotency_key_in_use',
          `A request with this ${IDEMPOTENCY_HEADER} is still in progress; retry after it completes`,
        );
      }
      // Answers holding a secret replay only to the key that asked first.
      if (res.request.policy?.idempotent === 'same-key' && claim.keyId !== auth.keyId) {
        throw new ApiError(
          'idempotency_key_reused',
          `This ${IDEMPOTENCY_HEADER} was used by another API key of the account, and the answer holds a secret ` +
            'only that key may see again; use a new key',
        );
      }
      // Another key gets only what asking would give it: an admin key's answer about an admin-only webhook is not its.
      if (authorize && claim.keyId !== auth.keyId) await authorize();
      return this.replay(res, claim.response) as T;
    }

    const before = headerSnapshot(res);
    let body: T;
    try {
      body = await work();
    } catch (err) {
      const keep = err instanceof ApiError && err.status !== 400 && err.status < 500;
      if (keep)
        await this.store.complete(claim, { status: err.status, headers: { ...err.headers }, body: err.toBody() });
      else await this.store.release(claim);
      throw err;
    }
    await this.store.complete(claim, { status: res.statusCode, headers: headersAddedSince(res, before), body });
    return body;
  }

  private replay(res: FastifyReply, stored: StoredResponse): unknown {
    res.status(stored.status);
    for (const [name, value] of Object.entries(stored.headers)) res.header(name, value);
    res.header('Idempotent-Replayed', 'true');
    return stored.body;
  }
}
