import { RequestMethod, Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { controllerPaths, handlerRoute } from './route-metadata';
import { PublicRoute, RoutePolicy, RoutePolicyOf } from './route-policy.decorator';

/** Every keyed route is under it; public routes and static mounts are left out. */
export const API_PREFIX = 'v1';

export interface RouteEntry {
  method: string;
  /** With the prefix, parameters as the document writes them: `/v1/pets/{petId}`. */
  path: string;
  /** The handler's name, which is its operationId. */
  operationId: string;
  policy: RoutePolicy;
}

interface Node {
  literal: Map<string, Node>;
  param?: Node;
  routes?: Map<string, RoutePolicy>;
}

// As the document lists an item's operations, so `Allow` keeps its order.
const METHOD_ORDER = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];
const newNode = (): Node => ({ literal: new Map() });

/** Anything no route takes (a 404 or 405 to be). */
export const UNROUTED: RoutePolicy = {
  scope: 'any',
  metering: 'account',
  idempotent: false,
  stability: 'stable',
  deprecated: false,
};

function joinPath(...parts: string[]): string {
  const segments = parts.flatMap((part) => part.split('/')).filter(Boolean);
  return `/${segments.map((s) => (s.startsWith(':') ? `{${s.slice(1)}}` : s)).join('/')}`;
}

// Compiled once at boot from the handlers' @Policy; the gate, the 405 answers and the OpenAPI
// document read it. Segments match as Express routes them: case-insensitively, a trailing slash allowed.
export class RouteTable {
  private readonly root = newNode();

  constructor(readonly entries: RouteEntry[]) {
    const ordered = [...entries].sort((a, b) => METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method));
    for (const entry of ordered) this.add(entry.method, entry.path, entry.policy);
  }

  /** Every routed handler but @PublicGet ones; refuses one without @Policy. */
  static compile(controllers: Type[]): RouteTable {
    const reflector = new Reflector();
    const scanner = new MetadataScanner();
    const entries: RouteEntry[] = [];
    for (const controller of controllers) {
      const base = controllerPaths(controller);
      for (const name of scanner.getAllMethodNames(controller.prototype)) {
        const handler = controller.prototype[name] as (...args: unknown[]) => unknown;
        const route = handlerRoute(handler);
        if (route === undefined || reflector.get(PublicRoute, handler) !== undefined) continue;
        const policy = reflector.get(RoutePolicyOf, handler) as RoutePolicy | undefined;
        for (const prefix of base)
          for (const path of route.paths) {
            const entry = {
              method: RequestMethod[route.method],
              path: joinPath(API_PREFIX, prefix, path),
              operationId: name,
            };
            if (!policy) throw new Error(`${entry.method} ${entry.path} (${entry.operationId}) declares no @Policy`);
            entries.push({ ...entry, policy });
          }
      }
    }
    return new RouteTable(entries);
  }

  static of(discovery: DiscoveryService): RouteTable {
    return RouteTable.compile(discovery.getControllers().map((wrapper) => wrapper.metatype as Type));
  }

  /** As declared: `path` written as the document writes it. */
  declared(method: string, path: string): RoutePolicy | undefined {
    return this.entries.find((entry) => entry.method === method && entry.path === path)?.policy;
  }

  policyFor(method: string, path: string): RoutePolicy {
    return find(this.root, segmentsOf(path), 0)?.get(method === 'HEAD' ? 'GET' : method) ?? UNROUTED;
  }

  /** HEAD comes with GET; undefined for a path no route has. */
  allowedAt(path: string): string[] | undefined {
    const routes = find(this.root, segmentsOf(path), 0);
    if (!routes) return undefined;
    const methods = [...routes.keys()];
    return routes.has('GET') ? [...methods, 'HEAD'] : methods;
  }

  private add(method: string, path: string, policy: RoutePolicy): void {
    let node = this.root;
    for (const segment of segmentsOf(path)) {
      if (segment.startsWith('{')) node = node.param ??= newNode();
      else {
        const literal = segment.toLowerCase();
        let next = node.literal.get(literal);
        if (!next) node.literal.set(literal, (next = newNode()));
        node = next;
      }
    }
    (node.routes ??= new Map()).set(method, policy);
  }
}

/** Ready before the first request: the gate is built with it. */
export const ROUTE_TABLE_PROVIDER = {
  provide: RouteTable,
  inject: [DiscoveryService],
  useFactory: (discovery: DiscoveryService) => RouteTable.of(discovery),
};

// A literal segment first, then a parameter, as Express tries routes.
function find(node: Node, segments: string[], i: number): Map<string, RoutePolicy> | undefined {
  if (i === segments.length) return node.routes;
  const segment = segments[i];
  const literal = node.literal.get(segment.toLowerCase());
  const found = literal && find(literal, segments, i + 1);
  if (found) return found;
  return segment && node.param ? find(node.param, segments, i + 1) : undefined;
}

function segmentsOf(path: string): string[] {
  const trimmed = path.endsWith('/') && path.length > 1 ? path.slice(1, -1) : path.slice(1);
  return trimmed.split('/');
}
