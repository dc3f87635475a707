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
  /** Literal segments, lowercase, each with its node at the same index. */
  names: string[];
  children: Node[];
  param?: Node;
  routes?: Map<string, RoutePolicy>;
  /** What a 405 names: the routes' methods, HEAD with GET; frozen, as every request shares it. */
  allowed?: readonly string[];
}

// As the document lists an item's operations, so `Allow` keeps its order.
const METHOD_ORDER = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'];
const newNode = (): Node => ({ names: [], children: [] });

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
    return routedAt(this.root, path)?.routes!.get(method === 'HEAD' ? 'GET' : method) ?? UNROUTED;
  }

  /** HEAD comes with GET; undefined for a path no route has. */
  allowedAt(path: string): readonly string[] | undefined {
    return routedAt(this.root, path)?.allowed;
  }

  private add(method: string, path: string, policy: RoutePolicy): void {
    let node = this.root;
    for (const segment of path.slice(1).split('/')) {
      if (segment.startsWith('{')) node = node.param ??= newNode();
      else {
        const literal = segment.toLowerCase();
        let i = node.names.indexOf(literal);
        if (i === -1) i = node.names.push(literal) - 1;
        node = node.children[i] ??= newNode();
      }
    }
    const routes = (node.routes ??= new Map()).set(method, policy);
    node.allowed = Object.freeze(routes.has('GET') ? [...routes.keys(), 'HEAD'] : [...routes.keys()]);
  }
}

/** Ready before the first request: the gate is built with it. */
export const ROUTE_TABLE_PROVIDER = {
  provide: RouteTable,
  inject: [DiscoveryService],
  useFactory: (discovery: DiscoveryService) => RouteTable.of(discovery),
};

// Reads the path in place, no segment copied: the gate and the 405 check ask on every request.
function routedAt(root: Node, path: string): Node | undefined {
  return find(root, path, 1, path.length > 1 && path.endsWith('/') ? path.length - 1 : path.length);
}

// The segment at path[from, end) and those after it; a literal segment first, then a parameter, as Express tries routes.
function find(node: Node, path: string, from: number, end: number): Node | undefined {
  let to = path.indexOf('/', from);
  if (to === -1) to = end;
  const i = literalAt(node.names, path, from, to);
  const literal = i === -1 ? undefined : to === end ? node.children[i] : find(node.children[i], path, to + 1, end);
  if (literal?.routes) return literal;
  if (to === from || !node.param) return undefined;
  return to === end ? (node.param.routes && node.param) : find(node.param, path, to + 1, end);
}

function literalAt(names: string[], path: string, from: number, to: number): number {
  for (let i = 0; i < names.length; i++) if (names[i].length === to - from && sameIgnoringCase(names[i], path, from)) return i;
  return -1;
}

/** Whether `path` holds `lower` (lowercase) at `from`, ASCII letters in any case, as Express compares literal segments. */
export function sameIgnoringCase(lower: string, path: string, from: number): boolean {
  for (let k = 0; k < lower.length; k++) {
    const c = path.charCodeAt(from + k);
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== lower.charCodeAt(k)) return false;
  }
  return true;
}
