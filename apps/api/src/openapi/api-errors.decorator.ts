import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptions, ApiResponse } from '@nestjs/swagger';
import { ErrorSchema } from './error-body.schema';

const DESCRIPTIONS: Record<number, string> = {
  409: 'Conflict with the current state (see code)',
  410: 'The operation is past its sunset date (endpoint_sunset)',
  412: 'If-Match does not match the current ETag (precondition_failed)',
  422: 'Idempotency-Key reused with another body (idempotency_key_reused)',
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

/**
 * Vendor extension `x-references` on an id property: it names the schema of the record the id
 * refers to. A well-formed id may still name no record of the account (400 or 404, per operation).
 */
export function references(schema: string): ApiPropertyOptions {
  return { 'x-references': schema } as unknown as ApiPropertyOptions;
}
