import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError } from '@app/errors';
import type { RoutePolicy } from './route-policy.decorator';

/** Every keyed route is under it; public routes and static mounts are left out. */
export const API_PREFIX = 'v1';

/** Anything no route takes (a 404 to be). */
export const UNROUTED: RoutePolicy = {
  scope: 'any',
  metering: 'account',
  idempotent: false,
  stability: 'stable',
  deprecated: false,
};

// As the document lists an item's operations, so `Allow` keeps its order; HEAD comes with GET.
const METHOD_ORDER = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];
const ANSWERED = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const methodNotAllowed = (method: string, allow: readonly string[]) =>
  new ApiError('method_not_allowed', `${method} is not allowed here; allowed: ${allow.join(', ')}`, undefined, {
    Allow: allow.join(', '),
  });

const isKeyed = (url: string) => url.toLowerCase().startsWith(`/${API_PREFIX}/`);

/**
 * What Fastify's router holds, seen as routes are registered: every keyed route must carry its @Policy, and each
 * keyed path answers the methods it lacks 405 with `Allow` (RFC 9110 15.5.6), from the router's own match.
 */
@Injectable()
export class RouteRegistry implements OnApplicationBootstrap {
  private readonly methodsByUrl = new Map<string, Set<string>>();
  private fastify?: FastifyInstance;

  /** Before Nest registers the app's routes (configureApp). */
  watch(fastify: FastifyInstance): void {
    this.fastify = fastify;
    fastify.addHook('onRoute', (route) => this.add(route));
  }

  private add(route: RouteOptions): void {
    if (!isKeyed(route.url) || route.config?.public || route.config?.allow) return;
    const methods = [route.method].flat();
    if (!route.config?.policy) throw new Error(`${methods.join(', ')} ${route.url} declares no @Policy`);
    let known = this.methodsByUrl.get(route.url);
    if (!known) this.methodsByUrl.set(route.url, (known = new Set()));
    for (const method of methods) known.add(method);
  }

  /** Once Nest has registered the app's routes: one route per keyed path for the methods it does not take. */
  onApplicationBootstrap(): void {
    if (!this.fastify) throw new Error('RouteRegistry: configureApp did not watch the routes');
    for (const [url, methods] of this.methodsByUrl) {
      const allow = Object.freeze([
        ...METHOD_ORDER.filter((m) => methods.has(m)),
        ...(methods.has('GET') ? ['HEAD'] : []),
      ]);
      const refused = ANSWERED.filter((m) => !allow.includes(m));
      // A route hook, after the gate's and before any body is read; the handler only because a route needs one.
      const refuse = async (request: FastifyRequest) => {
        throw methodNotAllowed(request.method, allow);
      };
      this.fastify.route({
        method: refused,
        url,
        config: { allow },
        exposeHeadRoute: false,
        onRequest: refuse,
        handler: refuse,
      });
    }
  }
}
