import { ERROR_STATUS, ErrorCode } from './error-codes';

export interface ErrorDetail {
  field: string;
  message: string;
}

/** The interface's Error model, plus the optional `details` DESIGN.md allows. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
  details?: ErrorDetail[];
}

/** Mapped to the Error body by the one exception filter; `headers` carry e.g. Retry-After. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message, status: this.status };
    if (this.details?.length) body.details = this.details;
    return body;
  }

  static notFound(what = 'Resource'): ApiError {
    return new ApiError('not_found', `${what} not found`);
  }

  static validation(field: string, message: string): ApiError {
    return new ApiError('validation_failed', `${field}: ${message}`, [{ field, message }]);
  }
}
