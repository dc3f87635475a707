import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { catchError, from, mergeMap, Observable, of } from 'rxjs';
import { ApiError } from '@app/errors';
import { IdempotencyStore, StoredResponse } from './idempotency.store';
import { IDEMPOTENCY_HEADER, readIdempotencyKey, requestFingerprint } from './request-fingerprint';

type Headers = Record<string, string>;

function headerSnapshot(res: Response): Headers {
  return Object.fromEntries(
    Object.entries(res.getHeaders())
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
  );
}

/** The headers the handler set (Location...), not those of the gate (rate limit, request id). */
function headersAddedSince(res: Response, before: Headers): Headers {
  return Object.fromEntries(Object.entries(headerSnapshot(res)).filter(([k, v]) => before[k] !== v));
}

/**
 * Idempotency-Key for creating POSTs (apply with @Idempotent()). The first answer for an
 * account and key is stored for 24 h and replayed, with `Idempotent-Replayed: true`, to a retry
 * with the same method, path and body; another body is 422, a retry while the first request is
 * still running is 409. 5xx answers and 400s (rejected input: nothing was done) are not stored,
 * so the key can be used again.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly store: IdempotencyStore) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    const key = readIdempotencyKey(req.headers[IDEMPOTENCY_HEADER.toLowerCase()]);
    if (key === undefined || !req.auth) return next.handle();

    const fingerprint = requestFingerprint(req.method, req.originalUrl, req.body);
    const claim = await this.store.claim(req.auth.accountId, key, fingerprint);
    if (claim.kind === 'unavailable') return next.handle();
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
      return of(this.replay(res, claim.response));
    }

    const before = headerSnapshot(res);
    const store = (response: StoredResponse) => this.store.complete(claim, response);
    return next.handle().pipe(
      mergeMap((body: unknown) =>
        from(store({ status: res.statusCode, headers: headersAddedSince(res, before), body }).then(() => body)),
      ),
      catchError((err: unknown) => {
        const keep = err instanceof ApiError && err.status !== 400 && err.status < 500;
        const settled = keep
          ? store({ status: err.status, headers: { ...err.headers }, body: err.toBody() })
          : this.store.release(claim);
        return from(
          settled.then(() => {
            throw err;
          }),
        );
      }),
    );
  }

  private replay(res: Response, stored: StoredResponse): unknown {
    res.status(stored.status);
    for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
    res.setHeader('Idempotent-Replayed', 'true');
    return stored.body;
  }
}
