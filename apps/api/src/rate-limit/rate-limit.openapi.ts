// The OpenAPI text of RateLimitController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { RateLimitStatus } from './rate-limit.dto';

export const GetRateLimitDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getRateLimit',
      summary: 'Both windows and any ban of the calling key; does not count',
      description:
        'The state of both windows (minute and day) of the calling key and any temporary ban. This call is not counted against the limits, so it is safe to poll before a burst.',
    }),
    ApiOkResponse({ type: RateLimitStatus }),
  );
