import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { RequestListener } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { Injectable, OnModuleInit } from '@nestjs/common';
import fastify, { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { AppConfig } from '@app/config';
import { ApiError } from '@app/errors';
import { JobCatalog, JobQueues } from '@app/jobs';

export const QUEUE_DASHBOARD_PATH = '/queues';
const COOKIE = 'queue_dashboard';
const COOKIE_MAX_AGE_SECONDS = 8 * 3600;
/**
 * bull-board's page links a Google Fonts stylesheet: refused, so opening the dashboard tells no
 * third party who operates it (the page falls back to system fonts). Inline styles are its own.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

/**
 * bull-board on the worker's ops port, at /queues, for operators: every queue with its jobs by
 * state, failures with their reasons, retry. Off (no handler) unless QUEUE_DASHBOARD_TOKEN is set.
 */
@Injectable()
export class QueueDashboardService implements OnModuleInit {
  /** Serves everything under /queues; undefined while the dashboard is off. */
  handler?: RequestListener;

  constructor(
    private readonly config: AppConfig,
    private readonly queues: JobQueues,
    private readonly catalog: JobCatalog,
  ) {}

  async onModuleInit(): Promise<void> {
    const token = this.config.queueDashboardToken;
    if (!token) return;
    const board = new FastifyAdapter().setBasePath(QUEUE_DASHBOARD_PATH);
    createBullBoard({
      queues: this.catalog.queues.map((name) => new BullMQAdapter(this.queues.get(name))),
      serverAdapter: board,
    });
    // Never listens: the ops server hands it the requests under /queues.
    const app = fastify();
    app.addHook('onRequest', tokenGate(token));
    // On the way out, so a static file's own Cache-Control does not replace no-store.
    app.addHook('onSend', async (_req, reply) => {
      reply.headers(SECURITY_HEADERS);
    });
    await app.register(board.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
    await app.ready();
    this.handler = (req, res) => app.routing(req, res);
  }
}

const SECURITY_HEADERS = {
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
};

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/**
 * Lets a request through with the token as `Authorization: Bearer`, or with the cookie a browser
 * gets by opening the dashboard once with `?token=`: the answer sets the cookie and redirects to
 * the same address without the token, so it leaves the address bar and history. The cookie holds
 * a value derived from the token (not the token), HttpOnly and SameSite=Strict (no cross-site
 * use of the dashboard's retry buttons). Comparisons are of SHA-256 digests in constant time.
 */
function tokenGate(token: string): onRequestHookHandler {
  const expectedToken = sha256(token);
  const session = createHmac('sha256', token).update('petstore queue dashboard session').digest('base64url');
  const expectedSession = sha256(session);
  const matches = (presented: string | undefined, expected: Buffer) =>
    presented !== undefined && timingSafeEqual(sha256(presented), expected);

  return async (req: FastifyRequest, reply: FastifyReply) => {
    const url = new URL(req.url, 'http://ops.invalid');
    const queryToken = url.searchParams.get('token');
    if (queryToken !== null) {
      if (!matches(queryToken, expectedToken)) return refuse(reply);
      url.searchParams.delete('token');
      const secure = req.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '';
      reply.header(
        'Set-Cookie',
        `${COOKIE}=${session}; Path=${QUEUE_DASHBOARD_PATH}; Max-Age=${COOKIE_MAX_AGE_SECONDS}; HttpOnly; SameSite=Strict${secure}`,
      );
      return reply.redirect(url.pathname + url.search, 303);
    }
    const bearer = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (matches(bearer, expectedToken) || matches(cookie(req, COOKIE), expectedSession)) return;
    return refuse(reply);
  };
}

function cookie(req: FastifyRequest, name: string): string | undefined {
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = pair.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function refuse(reply: FastifyReply): FastifyReply {
  return reply
    .code(401)
    .header('WWW-Authenticate', 'Bearer realm="queue dashboard"')
    .send(new ApiError('invalid_authorization', 'The queue dashboard needs its token').toBody());
}
