// The OpenAPI text of UsageController's operations: one composed decorator an operation, beside the routes.
import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { ApiErrorResponse } from '../openapi/api-errors.decorator';
import { MAX_BUCKETS, UsageSchema } from './usage.dto';

export const GetUsageDocs = () =>
  applyDecorators(
    ApiOperation({
      operationId: 'getUsage',
      summary: 'Requests admitted, refused (429) and bans, per minute, hour or day',
      description:
        "The account's request history as the rate limiter counted it, per UTC bucket, for one key (`keyId`) or the whole account, with the plan's limits alongside. Exact across API replicas; the current minute is included as it happens. Requests answered while the limiter's Redis was unreachable are not counted. Minute buckets are kept 2 days and hour and day buckets 90 days (the operator's `RETENTION_USAGE_MINUTES_DAYS` and `RETENTION_USAGE_HOURS_DAYS`); older buckets read as zero. At most 1,500 buckets per call.",
    }),
    ApiOkResponse({ type: UsageSchema }),
    ApiErrorResponse(
      422,
      'Each parameter is valid but not the range they make (invalid_range; `details` name the field): `from` must be ' +
        `before \`to\`, and the range may hold at most ${MAX_BUCKETS.toLocaleString('en-US')} buckets of the granularity`,
    ),
  );
