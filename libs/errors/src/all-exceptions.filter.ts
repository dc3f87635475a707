import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './api-error';
import { ErrorCode } from './error-codes';

// Connection failures (08: 08001 also when no server takes writes, libs/database PrimaryLocator), shutdown and
// start-up (57P01-57P03: a failover's demoted or promoted server), too many connections; a write on a server
// that became a standby (25006 read_only_sql_transaction); a statement cancelled by its timeout (57014) or a
// lock wait over lock_timeout (55P03): a database failing over or overloaded, which a retry later may find free.
const PG_UNAVAILABLE = /^(08|57P0[1-3]|53300|57014|55P03|25006)/;
const NET_UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

export function isUnavailableError(err: unknown): boolean {
  const e = err as { code?: unknown; driverError?: { code?: unknown }; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = String(e.driverError?.code ?? e.code ?? '');
  if (NET_UNAVAILABLE.has(code) || PG_UNAVAILABLE.test(code)) return true;
  const message = String(e.message ?? '');
  return /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error/i.test(
    message,
  );
}

// What Fastify refuses itself (its error's code, under the HttpException Nest makes of it).
const FASTIFY_ERRORS: Record<string, (req: FastifyRequest) => ApiError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (req) =>
    new ApiError('payload_too_large', `The request body exceeds ${req.routeOptions.bodyLimit} bytes`),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new ApiError('unsupported_media_type', 'Send the body with Content-Type: application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new ApiError('malformed_request', 'Content-Length does not match the body sent'),
  FST_ERR_BAD_URL: () => new ApiError('invalid_parameter', 'The URL is not valid percent-encoded UTF-8'),
};

function fromHttpException(e: HttpException, req: FastifyRequest): ApiError {
  const fastifyCode = (e.cause as { code?: string } | undefined)?.code;
  const fromFastify = fastifyCode === undefined ? undefined : FASTIFY_ERRORS[fastifyCode];
  if (fromFastify) return fromFastify(req);
  const status = e.getStatus();
  const byStatus: Record<number, [ErrorCode, string]> = {
    400: ['invalid_json', 'The request body is not valid JSON'],
    404: ['not_found', 'No such route'],
    405: ['method_not_allowed', 'The method is not allowed on this path'],
    413: ['payload_too_large', 'The request body is too large'],
  };
  const [code, message] =
    byStatus[status] ?? (status >= 500 ? ['internal_error', 'Internal error'] : ['invalid_parameter', 'Bad request']);
  return new ApiError(code, message);
}

// The one place that turns anything thrown into the Error body. Unknown failures become 500 with a
// fixed message: stacks, SQL and driver text never reach the client; the log gets class and message.
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = this.toApiError(exception, reply);
    if (reply.sent) {
      reply.raw.end();
      return;
    }
    void reply
      .headers(error.headers)
      .code(error.status)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(error.toBody()));
  }

  private toApiError(exception: unknown, reply: FastifyReply): ApiError {
    if (exception instanceof ApiError) return exception;
    if (exception instanceof HttpException) return fromHttpException(exception, reply.request);
    // Ties a logged failure to the access-log line and to what the client saw.
    const reqId = reply.getHeader('X-Request-Id');
    if (isUnavailableError(exception)) {
      this.logger.warn({ reqId, err: describe(exception) }, 'backing service unavailable');
      return new ApiError('service_unavailable', 'The service is temporarily unavailable, retry later', undefined, {
        'Retry-After': '5',
      });
    }
    this.logger.error({ reqId, err: describe(exception) }, 'unhandled error');
    return new ApiError('internal_error', 'An internal error occurred');
  }
}

/** No stack, no SQL. */
export function describe(err: unknown): { type: string; code?: string; message: string } {
  if (err instanceof Error) {
    const code =
      (err as { code?: unknown; driverError?: { code?: unknown } }).driverError?.code ??
      (err as { code?: unknown }).code;
    return {
      type: err.constructor.name,
      code: code === undefined ? undefined : String(code),
      message: err.message.slice(0, 300),
    };
  }
  return { type: typeof err, message: 'non-error thrown' };
}
