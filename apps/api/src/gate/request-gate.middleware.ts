import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { Clock } from '@app/config';
import { ApiError } from '@app/errors';
import {
  ANONYMOUS_LIMITS,
  ApiKeyAuthenticator,
  ApiKeysService,
  AuthContext,
  keySubject,
  limitsFor,
  PlanRateLimiter,
  RateLimitDecision,
  rateLimitHeaders,
  RateLimitSubject,
} from '@app/access';
import { addressBucket, duplicateAuthorization, hasDuplicateAuthorization } from './client-identity';

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

/** Key management needs `admin`, not `write` (ApiKeysService checks it); tested only for keys without `write`. */
const KEYS_PATH = /^\/v1\/keys(\/|$)/i;
const isKeysPath = (path: string) => KEYS_PATH.test(path);

const invalidKey = () => new ApiError('invalid_api_key', 'The API key is unknown, revoked, expired or rotated out');

const BEARER = /^Bearer ([^\s]+)$/i; // the scheme is case-insensitive (RFC 9110)
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/**
 * Report on the caller's own limits without spending them (Express routes match
 * case-insensitively, with or without a trailing slash): a client over its limit, or banned, can
 * still see where it stands and when that ends.
 */
const RATE_LIMIT_PATH = /^\/v1\/rate_limit\/?$/i;
const USAGE_PATH = /^\/v1\/usage\/?$/i;
const LOWER_U = 0x75;
/** Case-insensitive regexps run in V8's runtime (~2 us); length and one character rule out almost every path first. */
function isPeekPath(path: string): boolean {
  const n = path.length;
  if (n === 14 || n === 15) return RATE_LIMIT_PATH.test(path);
  return (n === 9 || n === 10) && (path.charCodeAt(4) | 0x20) === LOWER_U && USAGE_PATH.test(path);
}

/**
 * Authentication, rate limiting and scope, in front of everything else (body parsing
 * included), so that every answer (a 400 for bad JSON, a 404 for an unknown route, a 401)
 * carries the rate-limit headers and key guessing is slowed like any other traffic.
 */
@Injectable()
export class RequestGateMiddleware implements NestMiddleware {

  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly limiter: PlanRateLimiter,
    private readonly keys: ApiKeysService,
    private readonly clock: Clock,
  ) {}

  use(req: Request, res: Response, next: NextFunction): void {
    this.gate(req, res).then(() => next(), next);
  }

  private async gate(req: Request, res: Response): Promise<void> {
    const now = this.clock.nowMs();
    const address: RateLimitSubject = { bucket: addressBucket(req.ip), banKey: 'ip', plan: 'anonymous' };
    const known: { auth?: AuthContext; failure?: unknown; token?: string } = hasDuplicateAuthorization(req.rawHeaders)
      ? { failure: duplicateAuthorization() }
      : this.fromCache(req.headers.authorization, now);
    let { auth, failure } = known;
    let decision: RateLimitDecision | undefined;
    if (known.token !== undefined && this.authenticator.wasVerified(known.token)) {
      // A key Postgres confirmed before, whose cached answer went stale: its own cost. (Its
      // address may have spent its anonymous budget; that must not refuse a working key.)
      ({ auth, failure } = await this.lookUp(known.token, now));
    } else if (known.token !== undefined) {
      // Only Postgres knows this key, and anyone can make up keys with a valid checksum: the
      // client address pays for the lookup first, so a refused address costs Postgres nothing.
      decision = await this.limiter.consume(address, ANONYMOUS_LIMITS, now);
      // A key that cannot be checked (Postgres unreachable) is limited per client address like a
      // missing one, so its 503 carries the rate-limit headers too.
      if (decision.outcome === 'admitted') {
        ({ auth, failure } = await this.lookUp(known.token, now));
        if (auth) decision = undefined; // a real key: its account's budget applies as well
      }
    }
    const peek = auth !== undefined && req.method === 'GET' && isPeekPath(req.path);
    if (!decision) {
      const subject = auth ? keySubject(auth.accountId, auth.keyId, auth.plan) : address;
      const limits = auth ? limitsFor(auth) : ANONYMOUS_LIMITS;
      decision = peek
        ? await this.limiter.peek(subject, limits, now)
        : await this.limiter.consume(subject, limits, now);
    }
    res.locals.rateLimit = decision;
    // setHeader rather than Express's res.set, which lowercases every name once more for its
    // Content-Type check.
    const headers = rateLimitHeaders(decision, now);
    for (const name in headers) res.setHeader(name, headers[name]);
    if (peek) res.removeHeader('Retry-After');

    // GET /rate_limit and /usage answer even a banned key, so a client can see when its ban ends.
    if (decision.outcome === 'banned' && !peek) {
      if (decision.newlyBanned && auth) await this.keys.recordBan(auth);
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
    if (auth && !READ_METHODS.has(req.method) && !auth.scopes.includes('write') && !isKeysPath(req.path)) {
      throw new ApiError('insufficient_scope', 'This API key lacks the write scope');
    }
    res.locals.auth = auth;
  }

  /**
   * Authentication alone: the caller behind the Authorization header, or why there is none.
   * Never throws: a failed lookup (Postgres down) is a failure like the others, answered after
   * the limiter ran. Public so that the benchmark can measure it without the limiter.
   */
  async identify(header: string | undefined, now: number): Promise<{ auth?: AuthContext; failure?: unknown }> {
    const known = this.fromCache(header, now);
    return known.token === undefined ? known : this.lookUp(known.token, now);
  }

  /** What the header and the cache of verified keys tell without I/O; `token` when Postgres must be asked. */
  private fromCache(
    header: string | undefined,
    now: number,
  ): { auth?: AuthContext; failure?: unknown; token?: string } {
    if (!header) return { failure: new ApiError('missing_api_key', 'Send Authorization: Bearer <API_KEY>') };
    const match = BEARER.exec(header);
    if (!match)
      return { failure: new ApiError('invalid_authorization', 'The Authorization header must be Bearer <API_KEY>') };
    const auth = this.authenticator.cached(match[1], now);
    if (auth === undefined) return { token: match[1] };
    return auth ? { auth } : { failure: invalidKey() };
  }

  private async lookUp(token: string, now: number): Promise<{ auth?: AuthContext; failure?: unknown }> {
    try {
      const auth = await this.authenticator.lookUp(token, now);
      return auth ? { auth } : { failure: invalidKey() };
    } catch (err) {
      return { failure: err };
    }
  }
}
