import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { fixedHeaders, Middleware, oneLayer } from './one-layer';

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

  it('sends the headers named `alone` in a row as one entry of Node\'s table, the same bytes on the wire', async () => {
    // configure-app's options.
    const security = helmet({
      contentSecurityPolicy: false,
      crossOriginEmbedderPolicy: false,
      crossOriginOpenerPolicy: false,
      originAgentCluster: false,
      xDnsPrefetchControl: false,
      xDownloadOptions: false,
      xPermittedCrossDomainPolicies: false,
      xXssProtection: false,
    }) as Middleware;
    const alone = ['Cross-Origin-Resource-Policy', 'Referrer-Policy', 'Strict-Transport-Security', 'X-Frame-Options'];
    const head = async (middleware: Middleware) => {
      let entries = 0;
      const server = createServer((rq: IncomingMessage, rs: ServerResponse) => {
        rs.sendDate = false;
        middleware(rq as Request, rs as unknown as Response, () => {
          entries = rs.getHeaderNames().length;
          rs.end('{}');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
        socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
        let text = '';
        for await (const chunk of socket) text += String(chunk);
        return { text: text.slice(0, text.indexOf('\r\n\r\n')), entries };
      } finally {
        server.close();
      }
    };
    const byHelmet = await head(security);
    const fixed = await head(fixedHeaders(security, alone));
    expect(fixed.text).toBe(byHelmet.text);
    expect(fixed.text).toContain('Referrer-Policy: no-referrer\r\n');
    // Cross-Origin-Resource-Policy, Referrer-Policy and Strict-Transport-Security are one entry.
    expect(fixed.entries).toBe(byHelmet.entries - 2);
  });
});
