import { INestApplication, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { PublicRoute } from '../policy/route-policy.decorator';

export function publicRoutesOf(controllers: Type[]): string[] {
  return controllers.flatMap((controller) =>
    Object.getOwnPropertyNames(controller.prototype)
      .map((method) => Reflect.getMetadata(PublicRoute.KEY, controller.prototype[method]) as string | undefined)
      .filter((path): path is string => path !== undefined)
      .map((path) => `/${path}`),
  );
}

// The @PublicGet routes and the served files (with a trailing slash too), and the static mounts with
// what lies below. Case-sensitive: `/DOCS` is routed to the same place but answers 401, which gives nothing away.
export class PublicPaths {
  private readonly exact: Set<string>;

  constructor(
    /** The global prefix leaves them out. */
    readonly routes: string[],
    private readonly mounts: string[],
    files: string[] = [],
  ) {
    this.exact = new Set([...routes, ...files].flatMap((path) => [path, `${path}/`]));
  }

  static of(app: INestApplication, mounts: string[], files: string[]): PublicPaths {
    const controllers = app.get(DiscoveryService).getControllers();
    return new PublicPaths(publicRoutesOf(controllers.map((wrapper) => wrapper.metatype as Type)), mounts, files);
  }

  has(path: string): boolean {
    if (this.exact.has(path)) return true;
    for (const mount of this.mounts) {
      // Not a longer name ("/docsx").
      if (path.startsWith(mount) && (path.length === mount.length || path.charCodeAt(mount.length) === 0x2f)) {
        return true;
      }
    }
    return false;
  }
}
