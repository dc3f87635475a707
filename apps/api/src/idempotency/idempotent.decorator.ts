import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH } from './request-fingerprint';

/**
 * Makes a creating POST idempotent and documents it (header parameter, 409 and 422): one line
 * on the controller method. Needs IdempotencyModule, imported once by AppModule.
 */
export function Idempotent(): MethodDecorator {
  return applyDecorators(
    UseInterceptors(IdempotencyInterceptor),
    ApiHeader({
      name: IDEMPOTENCY_HEADER,
      required: false,
      description:
        'A unique key (a UUID, say) that makes retries safe: for 24 hours a request from the same account ' +
        'with the same key, method, path and body gets the first answer again (status, body, headers, plus ' +
        '`Idempotent-Replayed: true`) without doing the work twice. Another body with the same key is 422 ' +
        '`idempotency_key_reused`; a retry while the first request is still running is 409 ' +
        '`idempotency_key_in_use`. 400 and 5xx answers are not kept: the key can be used again.',
      // At least one visible character: HTTP strips surrounding spaces, so spaces alone are an empty key.
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[ -~]*[!-~][ -~]*$' },
    }),
    ApiErrors(409, 422),
  );
}
