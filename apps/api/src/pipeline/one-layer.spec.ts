import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { rawHead } from '@app/testing';
import { fixedHeaders, Middleware, oneLayer } from './one-layer';
import { HELMET_OPTIONS, securityHeaders } from './security-headers';

const req = {} as Request;
const answer = () => {
  const headers: Record<string, string> = {};
  const res = { setHeader: (n: string, v: string) => (headers[n] = v), removeHeader: (n: string) => delete headers[n] };
  return { headers, res: res as unknown as Response };
};

describe('oneLayer', () => {
  it('runs its steps in order, each when the one before calls next, then the next layer', async () => {
    const seen: string[] = [];
    const step =
      (name: string, later = false): Middleware =>
      (_req, _res, next) => {
        seen.push(name);
        if (later) setImmediate(next);
        else next();
      };
    const done = new Promise<unknown>((resolve) =>
      oneLayer(step('a'), step('b', true), step('c'))(req, answer().res, resolve),
    );
    expect(await done).toBeUndefined();
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('skips the steps after one that fails and hands its error on', () => {
    const seen: string[] = [];
    const failure = new Error('refused');
    let handed: unknown;
    oneLayer(
      (_req, _res, next) => next(failure),
      () => seen.push('after'),
    )(req, answer().res, ((err?: unknown) => (handed = err)) as NextFunction);
    expect(handed).toBe(failure);
    expect(seen).toEqual([]);
  });
});

describe('fixedHeaders', () => {
  it('sets exactly the headers helmet sets, as helmet sets them', () => {
    const options = { contentSecurityPolicy: false, xXssProtection: false } as const;
    const byHelmet = answer();
    helmet(options)(req as never, byHelmet.res as never, () => undefined);
    const fixed = answer();
    let called = false;
    fixedHeaders(helmet(options) as Middleware)(req, fixed.res, () => (called = true));
    expect(called).toBe(true);
    expect(Object.keys(byHelmet.headers).length).toBeGreaterThan(3);
    expect(fixed.headers).toEqual(byHelmet.headers);
  });

  it('refuses at boot a middleware whose headers depend on the request', () => {
    const byMethod: Middleware = (r, res, next) => {
      res.setHeader('X-Method', r.method);
      next();
    };
    expect(() => fixedHeaders(byMethod)).toThrow(/depend on the request/);
  });

  it('refuses at boot a middleware that does not go on synchronously', () => {
    expect(() => fixedHeaders((_r, _res, next) => setImmediate(next))).toThrow(/synchronously/);
  });

  it("sends helmet's headers set by it alone in a row as one entry of Node's table, the same bytes on the wire", async () => {
    const security = helmet(HELMET_OPTIONS) as Middleware;
    const head = (middleware: Middleware) =>
      rawHead((req, res, end) => middleware(req as Request, res as unknown as Response, end));
    const byHelmet = await head(security);
    const fixed = await head(securityHeaders());
    expect(fixed.text).toBe(byHelmet.text);
    expect(fixed.text).toContain('Referrer-Policy: no-referrer\r\n');
    // Cross-Origin-Resource-Policy, Referrer-Policy and Strict-Transport-Security are one entry.
    expect(fixed.entries).toBe(byHelmet.entries - 2);
  });
});
