import type { NextFunction, Request, Response } from 'express';

export type Middleware = (req: Request, res: Response, next: NextFunction) => void;

// Each Express layer costs a router dispatch and its allocations on every request; steps of one layer
// run in order, each calling `next` (at once or later), and an error skips the rest (decisions.md, "One pass").
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
 * set them whatever the request, and synchronously; `fixedHeaders` throws at boot otherwise.
 */
export function fixedHeaders(middleware: Middleware): Middleware {
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
  return (_req, res, next) => {
    for (let i = 0; i < ops.length; i++) {
      const [name, value] = ops[i];
      if (value === undefined) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    next();
  };
}
