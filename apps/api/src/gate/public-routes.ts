import { applyDecorators, Get, INestApplication, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

const PublicRoute = DiscoveryService.createDecorator<string>();

/**
 * A GET route outside /v1 that needs no API key and is not rate-limited (the health checks). The
 * gate runs before Express routes a request, so it knows public routes by path: PublicPaths
 * collects those of the routes marked so.
 */
export function PublicGet(path: string): MethodDecorator {
  return applyDecorators(Get(path), PublicRoute(path));
}

/** The paths (`/health/live`, ...) of the routes these controllers mark @PublicGet. */
export function publicRoutesOf(controllers: Type[]): string[] {
  return controllers.flatMap((controller) =>
    Object.getOwnPropertyNames(controller.prototype)
      .map((method) => Reflect.getMetadata(PublicRoute.KEY, controller.prototype[method]) as string | undefined)
      .filter((path): path is string => path !== undefined)
      .map((path) => `/${path}`),
  );
}

/**
 * What the gate lets through without a key: the @PublicGet routes (Express also routes them with
 * a trailing slash) and the static mounts configureApp adds (/docs, /console, the document),
 * each with whatever lies below it. Case-sensitive, as before: `/DOCS` is routed to the same
 * place but answers 401, which gives nothing away.
 */
export class PublicPaths {
  private readonly exact: Set<string>;

  constructor(
    /** The @PublicGet routes: the global prefix leaves them out. */
    readonly routes: string[],
    private readonly mounts: string[],
  ) {
    this.exact = new Set(routes.flatMap((path) => [path, `${path}/`]));
  }

  /** The @PublicGet routes of every controller of the app, and the given mounts. */
  static of(app: INestApplication, mounts: string[]): PublicPaths {
    const controllers = app.get(DiscoveryService).getControllers();
    return new PublicPaths(publicRoutesOf(controllers.map((wrapper) => wrapper.metatype as Type)), mounts);
  }

  has(path: string): boolean {
    if (this.exact.has(path)) return true;
    for (const mount of this.mounts) {
      // The mount itself, or below it ("/docs/x"), not a longer name ("/docsx").
      if (path.startsWith(mount) && (path.length === mount.length || path.charCodeAt(mount.length) === 0x2f)) {
        return true;
      }
    }
    return false;
  }
}
