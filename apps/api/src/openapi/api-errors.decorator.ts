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

/**
 * Operation-specific error answers. The ones every operation can give (400, 401, 403, 404,
 * 413, 429, 500, 503) are added to every operation when the document is built.
 */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status] ?? 'Error', type: ErrorSchema }),
    ),
  );
}

/** 422 quota_exceeded of a creating operation (beside `@Idempotent()`'s 422, the descriptions are joined). */
export function ApiQuotaError(resource: string): MethodDecorator {
  const description = `The plan's quota of ${resource} is reached (quota_exceeded; \`details\` name the limit)`;
  return ApiResponse({ status: 422, description, type: ErrorSchema });
}

/**
 * Vendor extension `x-references` on an id property: it names the schema of the record the id
 * refers to. A well-formed id may still name no record of the account (400 or 404, per operation).
 */
export function references(schema: string): ApiPropertyOptions {
  return { 'x-references': schema } as unknown as ApiPropertyOptions;
}
