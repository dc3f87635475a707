import type { NextFunction, Request, Response } from 'express';
import { HeaderBlock } from '@app/observability';

export type Middleware = (req: Request, res: Response, next: NextFunction) => void;

// Each Express layer costs a router dispatch and its allocations on every request; steps of one layer
// run in order, each calling `next` (at once or later), and an error skips the rest (docs/internals/decisions/0041-one-layer-middleware.md).
export function oneLayer(...steps: Middleware[]): Middleware {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined || i === steps.length) return next(err);
      steps[i++](req, res, step);
    };
    step();
  };
}

/**
 * The headers `middleware` (helmet) sets, recorded once at boot and then set on every answer: it must
 * set them whatever the request, and synchronously; `fixedHeaders` throws at boot otherwise. Consecutive headers
 * named in `alone` (set by nothing else, or a second line would follow) go out as one entry of Node's header table.
 */
export function fixedHeaders(middleware: Middleware, alone: readonly string[] = []): Middleware {
  /** [name, value] sets it, [name] removes it. */
  type Op = [string, string?];
  const record = (req: object): Op[] => {
    const ops: Op[] = [];
    let called = false;
    const res = {
      setHeader: (name: string, value: unknown) => ops.push([name, String(value)]),
      removeHeader: (name: string) => ops.push([name]),
    };
    middleware(req as Request, res as unknown as Response, () => (called = true));
    if (!called) throw new Error('fixedHeaders: the middleware did not call next synchronously');
    return ops;
  };
  const ops = record({ method: 'GET', url: '/', headers: {} });
  const other = record({ method: 'POST', url: '/v1/x?y=1', headers: { 'content-type': 'application/json' } });
  if (JSON.stringify(other) !== JSON.stringify(ops))
    throw new Error('fixedHeaders: the middleware sets headers that depend on the request');
  const steps = blocksOf(ops, new Set(alone.map((name) => name.toLowerCase())));
  return (_req, res, next) => {
    for (let i = 0; i < steps.length; i++) steps[i](res);
    next();
  };
}

/**
 * Each op as a step; runs of headers set `alone` as one HeaderBlock (docs/internals/decisions/0050-header-block.md).
 */
function blocksOf(ops: [string, string?][], alone: Set<string>): ((res: Response) => void)[] {
  const steps: ((res: Response) => void)[] = [];
  for (let i = 0; i < ops.length; ) {
    const [name, value] = ops[i];
    let end = i + 1;
    if (value !== undefined && alone.has(name.toLowerCase()))
      while (end < ops.length && ops[end][1] !== undefined && alone.has(ops[end][0].toLowerCase())) end++;
    if (value === undefined) steps.push((res) => res.removeHeader(name));
    else if (end - i === 1) steps.push((res) => res.setHeader(name, value));
    else {
      const run = ops.slice(i, end);
      steps.push(new HeaderBlock(run.map(([n]) => n)).fixed(run.map(([, v]) => v!)));
    }
    i = end;
  }
  return steps;
}
