export * from './petstore-client';
export * from './event-stream';
export * from './petstore-error';
export * from './webhook-signature';
export type * from './schema';
export type * from './operation-types';
/** The whole document's types (openapi-typescript), for openapi-fetch or your own wrappers. */
export type { components, paths } from '#openapi';
