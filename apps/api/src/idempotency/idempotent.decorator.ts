import { applyDecorators } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { ApiErrorResponse } from '../openapi/api-errors.decorator';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH } from './request-fingerprint';

/** Documents the header, 409 and 422; @Policy applies it and the handler runs IdempotencyService.run(). */
export function Idempotent(opts: { secret?: boolean } = {}): MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: IDEMPOTENCY_HEADER,
      required: false,
      description:
        'A unique key (a UUID, say) that makes retries safe: for 24 hours a request from the same account ' +
        'with the same key, method, path and body gets the first answer again (status, body, headers, plus ' +
        '`Idempotent-Replayed: true`) without doing the work twice. Another body with the same key is 422 ' +
        '`idempotency_key_reused`; a retry while the first request is still running is 409 ' +
        '`idempotency_key_in_use`. 400 and 5xx answers are not kept: the key can be used again.' +
        (opts.secret
          ? ' The answer holds a secret: it is replayed only to the API key that made the first request; ' +
            'another key of the account gets 422 `idempotency_key_reused`.'
          : ''),
      // HTTP strips surrounding spaces, so spaces alone are an empty key.
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: '^[ -~]*[!-~][ -~]*$' },
    }),
    ApiErrorResponse(409, 'A request with this Idempotency-Key is still running (idempotency_key_in_use); retry later'),
    ApiErrorResponse(
      422,
      'This Idempotency-Key was used with another body (idempotency_key_reused)' +
        (opts.secret ? ', or by another API key of the account' : ''),
    ),
  );
}
