import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptions, ApiResponse } from '@nestjs/swagger';
import { ErrorSchema } from './error-body.schema';

const DESCRIPTIONS: Record<number, string> = {
  403: 'The API key lacks a scope this needs (insufficient_scope) or may not do it (api_key_rotated_out)',
  409: 'Conflict with the current state (see code)',
  410: 'The operation is past its sunset date (endpoint_sunset)',
  412: 'If-Match does not match the current ETag (precondition_failed)',
  422: 'Idempotency-Key reused with another body (idempotency_key_reused), or a rule refused a field (see code)',
};

/** Operation-specific answers; those every operation can give are added when the document is built. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status] ?? 'Error', type: ErrorSchema }),
    ),
  );
}

/** Beside `@Idempotent()`'s 422 the descriptions are joined. */
export function ApiQuotaError(resource: string): MethodDecorator {
  const description = `The plan's quota of ${resource} is reached (quota_exceeded; \`details\` name the limit)`;
  return ApiResponse({ status: 422, description, type: ErrorSchema });
}

/** Names the schema of the record an id refers to (`x-references`). */
export function references(schema: string): ApiPropertyOptions {
  return { 'x-references': schema } as unknown as ApiPropertyOptions;
}
