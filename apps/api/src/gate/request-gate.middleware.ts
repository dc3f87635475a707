import { Injectable, Logger, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiKeyAuthenticator, AuthContext } from '@app/auth';
import { Clock } from '@app/config';
import { ApiError, describe } from '@app/errors';
import { TransactionService } from '@app/outbox';
import { ANONYMOUS_LIMITS, limitsFor, PlanRateLimiter, RateLimitDecision, rateLimitHeaders } from '@app/rate-limit';

// On res.locals (the API's server declares these two fields up front, see http-server.ts) rather
// than on the request: a property added to every request cost an inline-cache miss and a
// hidden-class transition per request (~10 us of the gate's ~25, profiled with perf).
declare module 'express-serve-static-core' {
  interface Locals {
    /** The caller, once the key checks out; the gate guarantees it on every /v1 route. */
    auth?: AuthContext;
    /** This request's limiter decision (GET /rate_limit reports it). */
    rateLimit?: RateLimitDecision;
  }
}

const BEARER = /^Bearer ([^\s]+)$/i; // the scheme is case-insensitive (RFC 9110)
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Reports the limit without spending it (Express routes match case-insensitively, with or without a trailing slash). */
const PEEK_PATH = /^\/v1\/rate_limit\/?$/i;
/** Case-insensitive regexps run in V8's runtime (~2 us); the length rules out almost every path first. */
const isPeekPath = (path: string) => path.length >= 14 && path.length <= 15 && PEEK_PATH.test(path);

/**
 * Authentication, rate limiting and scope, in front of everything else (body parsing
 * included), so that every answer (a 400 for bad JSON, a 404 for an unknown route, a 401)
 * carries the rate-limit headers and key guessing is slowed like any other traffic.
 */
@Injectable()
export class RequestGateMiddleware implements NestMiddleware {
  private readonly logger = new Logger(RequestGateMiddleware.name);

  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly limiter: PlanRateLimiter,
    private readonly tx: TransactionService,
    private readonly clock: Clock,
  ) {}

  use(req: Request, res: Response, next: NextFunction): void {
    this.gate(req, res).then(() => next(), next);
  }

  private async gate(req: Request, res: Response): Promise<void> {
    const now = this.clock.nowMs();
    // A key that cannot be checked (Postgres unreachable, key not cached) is limited per client
    // address like a missing one, so its 503 carries the rate-limit headers too.
    const { auth, failure } = await this.identify(req.headers.authorization, now).catch((err: unknown) => ({
      auth: undefined,
      failure: err,
    }));
    const subject = auth
      ? { bucket: `a:${auth.accountId}`, banKey: `k${auth.keyId}`, plan: auth.plan }
      : { bucket: `ip:${req.ip ?? 'unknown'}`, banKey: 'ip', plan: 'anonymous' };
    const limits = auth ? limitsFor(auth) : ANONYMOUS_LIMITS;
    const peek = auth !== undefined && req.method === 'GET' && isPeekPath(req.path);
    const decision = peek
      ? await this.limiter.peek(subject, limits, now)
      : await this.limiter.consume(subject, limits, now);
    res.locals.rateLimit = decision;
    // setHeader rather than Express's res.set, which lowercases every name once more for its
    // Content-Type check.
    const headers = rateLimitHeaders(decision, now);
    for (const name in headers) res.setHeader(name, headers[name]);
    if (peek) res.removeHeader('Retry-After');

    // GET /rate_limit answers even a banned key, so a client can see when its ban ends.
    if (decision.outcome === 'banned' && !peek) {
      if (decision.newlyBanned && auth) await this.recordBan(auth);
      throw new ApiError(
        'api_key_banned',
        `This ${auth ? 'API key' : 'client address'} is temporarily banned for ignoring 429 answers; see Retry-After`,
      );
    }
    if (decision.outcome === 'limited') {
      throw new ApiError(
        'rate_limit_exceeded',
        `Rate limit of the ${decision.reported.name} window exceeded; see Retry-After`,
      );
    }
    if (failure) throw failure;
    if (auth && !READ_METHODS.has(req.method) && !auth.scopes.includes('write')) {
      throw new ApiError('insufficient_scope', 'This API key has only the read scope');
    }
    res.locals.auth = auth;
  }

  /**
   * Authentication alone: the caller behind the Authorization header, or why there is none.
   * Never throws: a failed lookup (Postgres down) is a failure like the others, answered after
   * the limiter ran. Public so that the benchmark can measure it without the limiter.
   */
  async identify(header: string | undefined, now: number): Promise<{ auth?: AuthContext; failure?: unknown }> {
    if (!header) return { failure: new ApiError('missing_api_key', 'Send Authorization: Bearer <API_KEY>') };
    const match = BEARER.exec(header);
    if (!match)
      return { failure: new ApiError('invalid_authorization', 'The Authorization header must be Bearer <API_KEY>') };
    let auth: AuthContext | null;
    try {
      auth = await this.authenticator.authenticate(match[1], now);
    } catch (err) {
      return { failure: err };
    }
    if (!auth)
      return { failure: new ApiError('invalid_api_key', 'The API key is unknown, revoked, expired or rotated out') };
    return { auth };
  }

  /** The event is worth a log line if it cannot be recorded, not a different answer than the 429. */
  private async recordBan(auth: AuthContext): Promise<void> {
    try {
      await this.tx.run((tx) =>
        tx.emit({
          accountId: auth.accountId,
          type: 'api_key.banned',
          resourceType: 'api_key',
          resourceId: auth.keyId,
          data: { id: auth.keyId, bannedAt: this.clock.now().toISOString() },
        }),
      );
    } catch (err) {
      this.logger.error({ err: describe(err), keyId: auth.keyId }, 'api_key.banned event not recorded');
    }
  }
}
