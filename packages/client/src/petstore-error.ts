import type { ErrorBody, ErrorCode } from './schema';
import type { WebHeaders } from './web-types';

/** Codes the SDK gives answers that carry no Error body (a proxy's HTML page, say) and links it refuses. */
export type ClientErrorCode =
  'bad_gateway' | 'service_unavailable' | 'gateway_timeout' | 'unexpected_response' | 'cross_origin_link';

const CODE_BY_STATUS: Record<number, ClientErrorCode> = {
  502: 'bad_gateway',
  503: 'service_unavailable',
  504: 'gateway_timeout',
};
/** Enough of a proxy's page to recognise it, not the whole page. */
const MAX_TEXT = 200;

/** A non-2xx answer (or one the SDK cannot use): the Error body's code, message and details, the status and the request id. */
export class PetstoreError extends Error {
  readonly code: ErrorCode | ClientErrorCode;
  readonly status: number;
  readonly details: ErrorBody['details'];
  readonly requestId: string | null;
  /** Seconds the server asked to wait (429, 503), when it said. */
  readonly retryAfter: number | null;

  constructor(
    status: number,
    body: (Partial<Omit<ErrorBody, 'code'>> & { code?: ErrorCode | ClientErrorCode }) | undefined,
    headers: WebHeaders,
  ) {
    super(body?.message ?? `HTTP ${status}`);
    this.name = 'PetstoreError';
    this.status = status;
    this.code = body?.code ?? CODE_BY_STATUS[status] ?? 'unexpected_response';
    this.details = body?.details;
    this.requestId = headers.get('x-request-id');
    const retryAfter = Number(headers.get('retry-after'));
    this.retryAfter = headers.has('retry-after') && Number.isFinite(retryAfter) ? retryAfter : null;
  }

  /** An answer whose body is not the API's Error JSON: its code comes from the status, its text (cut short) is the message. */
  static fromText(status: number, text: string, headers: WebHeaders): PetstoreError {
    const flat = text.replace(/\s+/g, ' ').trim();
    const excerpt = flat.length > MAX_TEXT ? `${flat.slice(0, MAX_TEXT)}…` : flat;
    return new PetstoreError(status, { message: `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}` }, headers);
  }
}
