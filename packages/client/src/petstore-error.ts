import type { ErrorBody, ErrorCode } from './schema';

/** A non-2xx answer: the Error body's code, message and details, the status and the request id. */
export class PetstoreError extends Error {
  readonly code: ErrorCode | 'unexpected_response';
  readonly status: number;
  readonly details: ErrorBody['details'];
  readonly requestId: string | null;
  /** Seconds the server asked to wait (429, 503), when it said. */
  readonly retryAfter: number | null;

  constructor(status: number, body: Partial<ErrorBody> | undefined, headers: Headers) {
    super(body?.message ?? `HTTP ${status}`);
    this.name = 'PetstoreError';
    this.status = status;
    this.code = body?.code ?? 'unexpected_response';
    this.details = body?.details;
    this.requestId = headers.get('x-request-id');
    const retryAfter = Number(headers.get('retry-after'));
    this.retryAfter = headers.has('retry-after') && Number.isFinite(retryAfter) ? retryAfter : null;
  }
}
