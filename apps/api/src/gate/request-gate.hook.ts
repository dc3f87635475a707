import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Clock } from '@app/config';
import { ApiError } from '@app/errors';
import {
  ANONYMOUS_LIMITS,
  ApiKeyAuthenticator,
  ApiKeysService,
  AuthContext,
  keySubject,
  limitsFor,
  LookupDeclined,
  lookupBusy,
  LookupRequester,
  PlanRateLimiter,
  RateLimitDecision,
  setRateLimitHeaders,
  RateLimitSubject,
  scopesAllow,
} from '@app/access';
import { refusedIntake } from './body-parsing';
import { addressBucket, duplicateAuthorization, hasDuplicateAuthorization } from './client-identity';
import { ProxyTrustWatch } from './proxy-trust-watch';
import type { OwnBudget, RoutePolicy } from '../policy/route-policy.decorator';
import { UNROUTED } from '../policy/route-registry';

// Decorated on every request (REQUEST_GATE_FIELDS), so each request keeps one shape.
declare module 'fastify' {
  interface FastifyRequest {
    /** The gate guarantees it on every /v1 route. */
    auth: AuthContext | null;
    /** GET /rate_limit reports it. */
    rateLimit: RateLimitDecision | null;
    policy: RoutePolicy | null;
    /** Let through once: a route that hands the request on to the not-found handler does not have it gated again. */
    admitted: boolean;
  }
}

/** What the gate sets on a request with its initial value, declared with Fastify (`decorateRequest`) up front. */
export const REQUEST_GATE_FIELDS = { auth: null, rateLimit: null, policy: null, admitted: false } as const;

type Identity = { auth?: AuthContext; failure?: unknown };

const invalidKey = () => new ApiError('invalid_api_key', 'The API key is unknown, revoked, expired or rotated out');

const BEARER = /^Bearer [^\s]+$/i; // case-insensitive scheme (RFC 9110)
// The scheme and its space are 7 characters in any case: test() and a slice, no match array per request.
const bearerSecret = (header: string): string | undefined => (BEARER.test(header) ? header.slice(7) : undefined);

const addressOf = (req: FastifyRequest): RateLimitSubject => ({
  bucket: addressBucket(req.ip),
  banKey: 'ip',
  plan: 'anonymous',
});

const ownSubject = (auth: AuthContext, budget: OwnBudget): RateLimitSubject => ({
  bucket: `k:${auth.keyId}:${budget.name}`,
  banKey: 'own',
  plan: auth.plan,
});

// The one request hook that reads a route's access (its Fastify `config`), for the route the router matched. Before
// body parsing, so every answer carries the rate-limit headers and key guessing is slowed like any other traffic.
// A genuine key is judged by its account from its first request; only requests without one spend their client
// address's anonymous budget.
@Injectable()
export class RequestGate {
  private readonly subjects = new WeakMap<AuthContext, RateLimitSubject>();

  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly limiter: PlanRateLimiter,
    private readonly keys: ApiKeysService,
    private readonly clock: Clock,
    private readonly trustWatch: ProxyTrustWatch,
  ) {}

  readonly onRequest = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void => {
    if (req.admitted) return done();
    req.admitted = true;
    this.trustWatch.observe(req);
    const access = req.routeOptions.config;
    if (access.public) return done(refusedIntake(req));
    // The gate's promise settles with nothing: then the intake's checks, or its refusal answered.
    this.gate(req, reply, access.policy ?? UNROUTED).then(() => done(refusedIntake(req)), done);
  };

  private async gate(req: FastifyRequest, reply: FastifyReply, policy: RoutePolicy): Promise<void> {
    const now = this.clock.nowMs();
    const { auth, failure } = hasDuplicateAuthorization(req.raw.rawHeaders)
      ? { failure: duplicateAuthorization() }
      : (this.known(req.headers.authorization, now) ?? (await this.lookUp(req.headers.authorization!, now, req)));
    if (!auth) {
      const decision = await this.limiter.consume(addressOf(req), ANONYMOUS_LIMITS, now);
      this.report(req, reply, decision, now);
      refuseOver(decision, 'client address');
      throw failure;
    }
    const account = this.subjectOf(auth);
    if (policy.metering === 'account') {
      const decision = await this.limiter.consume(account, limitsFor(auth), now);
      this.report(req, reply, decision, now);
      if (decision.newlyBanned) await this.keys.recordBan(auth);
      refuseOver(decision, 'API key');
    } else {
      // The account's budget is only read, and answered even to a banned key (its ban's end).
      const own = await this.limiter.consume(ownSubject(auth, policy.metering), policy.metering, now);
      if (own.outcome !== 'admitted') {
        this.report(req, reply, own, now);
        refuseOver(own, 'API key', policy.metering.name);
      }
      this.report(req, reply, await this.limiter.peek(account, limitsFor(auth), now), now);
      reply.removeHeader('Retry-After');
    }
    if (!scopesAllow(auth.scopes, policy.scope)) {
      throw new ApiError('insufficient_scope', `This API key lacks the ${policy.scope} scope this operation needs`);
    }
    req.auth = auth;
    req.policy = policy;
  }

  // A cached key's context is the same object on every request: its subject (three strings) is made once.
  private subjectOf(auth: AuthContext): RateLimitSubject {
    let subject = this.subjects.get(auth);
    if (!subject) this.subjects.set(auth, (subject = keySubject(auth.accountId, auth.keyId, auth.plan)));
    return subject;
  }

  private report(req: FastifyRequest, reply: FastifyReply, decision: RateLimitDecision, now: number): void {
    req.rateLimit = decision;
    setRateLimitHeaders(reply, decision, now);
  }

  // Throws only the 503 of a spent lookup budget (no strike, no limiter); a failed lookup is a failure
  // like the others, answered after the address's limiter. Without `req` (the benchmark), a lookup
  // Postgres alone can answer does not wait for its address.
  async identify(header: string | undefined, now: number, req?: FastifyRequest): Promise<Identity> {
    return this.known(header, now) ?? this.lookUp(header!, now, req);
  }

  // What needs no lookup (no key, a malformed header, a key in the cache), answered without a promise.
  private known(header: string | undefined, now: number): Identity | undefined {
    if (!header) return { failure: new ApiError('missing_api_key', 'Send Authorization: Bearer <API_KEY>') };
    const secret = bearerSecret(header);
    if (secret === undefined)
      return { failure: new ApiError('invalid_authorization', 'The Authorization header must be Bearer <API_KEY>') };
    const cached = this.authenticator.cached(secret, now);
    if (cached !== undefined) return cached ? { auth: cached } : { failure: invalidKey() };
    return undefined;
  }

  private async lookUp(header: string, now: number, req?: FastifyRequest): Promise<Identity> {
    const secret = bearerSecret(header)!;
    try {
      const auth = await this.authenticator.lookUp(secret, now, req && this.requester(addressOf(req), now));
      return auth ? { auth } : { failure: invalidKey() };
    } catch (err) {
      if (err instanceof ApiError && err.code === 'service_unavailable') throw err;
      // The address's refusal answers it; a 503 only if its budget reopened meanwhile (a new minute).
      return { failure: err instanceof LookupDeclined ? lookupBusy() : err };
    }
  }

  // A limited or banned address's misses cannot spend the lookups other clients' new keys need.
  // Only peeked: a lookup that finds a genuine key costs its address nothing.
  private requester(address: RateLimitSubject, now: number): LookupRequester {
    return {
      address: address.bucket,
      isLimited: async () => {
        const decision = await this.limiter.peek(address, ANONYMOUS_LIMITS, now);
        return decision.outcome !== 'admitted' || decision.reported.remaining === 0;
      },
    };
  }
}

/** `budget` names a route's own budget. */
function refuseOver(decision: RateLimitDecision, who: 'API key' | 'client address', budget?: string): void {
  if (decision.outcome === 'banned') {
    throw new ApiError('api_key_banned', `This ${who} is temporarily banned for ignoring 429 answers; see Retry-After`);
  }
  if (decision.outcome === 'limited') {
    const what = budget ? `this key's ${budget} budget` : 'the';
    throw new ApiError(
      'rate_limit_exceeded',
      `Rate limit of ${what} ${decision.reported.name} window exceeded; see Retry-After`,
    );
  }
}
