import type { OpenAPIObject } from '@nestjs/swagger';
import type { OwnBudget, RoutePolicy, RouteScope } from './route-policy.decorator';

// The document is read as plain JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

export interface RouteEntry {
  method: string;
  /** With the base path: `/v1/pets/{petId}`. */
  path: string;
  operationId: string;
  policy: RoutePolicy;
}

interface Node {
  literal: Map<string, Node>;
  param?: Node;
  routes?: Map<string, RoutePolicy>;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const newNode = (): Node => ({ literal: new Map() });

/** Anything no route takes (a 404 or 405 to be). */
export const UNROUTED: RoutePolicy = {
  scope: 'any',
  metering: 'account',
  idempotent: false,
  stability: 'stable',
  deprecated: false,
};

/** As publishPolicy wrote it. */
function statedPolicy(op: Json): RoutePolicy | undefined {
  const scope = op['x-scope'] as RouteScope | undefined;
  if (!scope) return undefined;
  const metering = op['x-metering'] as Json;
  return {
    scope,
    metering: metering.budget
      ? ({ name: metering.budget, perMinute: metering.perMinute, perDay: metering.perDay } as OwnBudget)
      : 'account',
    idempotent: op['x-idempotent'] ?? false,
    stability: op['x-stability'] ?? 'stable',
    deprecated: op.deprecated === true,
  };
}

// Compiled once at boot from the served document; the gate, the 405 answers and the docs table read
// it. Segments match as Express routes them: case-insensitively, a trailing slash allowed.
export class RouteTable {
  private readonly root = newNode();
  readonly entries: RouteEntry[] = [];

  constructor(document: OpenAPIObject) {
    const base = new URL(document.servers?.[0]?.url ?? '/', 'http://x').pathname.replace(/\/$/, '');
    for (const [template, item] of Object.entries(document.paths) as [string, Json][]) {
      for (const m of HTTP_METHODS.filter((method) => item[method])) {
        const op = item[m] as Json;
        const entry = { method: m.toUpperCase(), path: `${base}${template}`, operationId: op.operationId as string };
        const policy = statedPolicy(op);
        if (!policy) throw new Error(`${entry.method} ${entry.path} (${entry.operationId}) declares no @Policy`);
        this.add(entry.method, entry.path, policy);
        this.entries.push({ ...entry, policy });
      }
    }
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
