import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptions, ApiResponse } from '@nestjs/swagger';
import { ErrorSchema } from './error-body.schema';

// Only answers whose one text is true of every operation giving them; a 409 or 422 says which conflict or rule
// (ApiErrorResponse), so no operation's description names a code it never answers.
const DESCRIPTIONS: Record<number, string> = {
  403: 'The API key lacks a scope this needs (insufficient_scope)',
  410: 'The operation is past its sunset date (endpoint_sunset)',
  412: 'If-Match does not match the current ETag (precondition_failed); an empty or blank If-Match matches nothing',
};

/** Operation-specific answers; those every operation can give are added when the document is built. */
export function ApiErrors(...statuses: (keyof typeof DESCRIPTIONS)[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: DESCRIPTIONS[status], type: ErrorSchema })),
  );
}

/**
 * An answer of this operation alone, its description naming the code and the rule. Several of one status (an
 * operation's own 409 beside `@Idempotent()`'s) are joined.
 */
export function ApiErrorResponse(status: number, description: string): MethodDecorator & ClassDecorator {
  return ApiResponse({ status, description, type: ErrorSchema });
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
