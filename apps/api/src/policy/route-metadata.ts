import { RequestMethod, Type } from '@nestjs/common';

// Nest exports no public reader of what @Controller and @Get/@Post record, nor its keys (only
// '@nestjs/common/internal'): they are read here alone, and route-metadata.spec.ts fails if Nest renames them.
const PATH_KEY = 'path';
const METHOD_KEY = 'method';

const asList = (path: string | string[] | undefined) => (Array.isArray(path) ? path : [path ?? '']);

/** The paths a @Controller mounts its handlers under. */
export function controllerPaths(controller: Type): string[] {
  return asList(Reflect.getMetadata(PATH_KEY, controller) as string | string[] | undefined);
}

/** A handler's method and paths as its @Get/@Post/… declared them; undefined for a method that is no route. */
export function handlerRoute(handler: object): { method: RequestMethod; paths: string[] } | undefined {
  const method = Reflect.getMetadata(METHOD_KEY, handler) as RequestMethod | undefined;
  if (method === undefined) return undefined;
  return { method, paths: asList(Reflect.getMetadata(PATH_KEY, handler) as string | string[] | undefined) };
}
