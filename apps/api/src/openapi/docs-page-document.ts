import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The document as SwaggerModule.setup gets it for /docs: a factory of a stand-in that serialises to the document.
 * Swagger keeps what the factory returns for the process's life and embeds it in swagger-ui-init.js through
 * JSON.stringify (once, then a string): a parsed document there is ~11,600 objects every mark-compact walks.
 * test/e2e/platform/public-endpoints.e2e-spec.ts fails if @nestjs/swagger stops serialising it that way.
 */
export function docsPageDocument(json: string): () => OpenAPIObject {
  const standIn = { toJSON: (): unknown => JSON.parse(json) };
  return () => standIn as unknown as OpenAPIObject;
}
