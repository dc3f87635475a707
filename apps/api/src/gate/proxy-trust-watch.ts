import proxyAddr from '@fastify/proxy-addr';
import { Logger } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import { AppConfig } from '@app/config';
import { Clock } from '@app/config';
import { addressBucket } from './client-identity';

/** TRUST_PROXY compiled: whether the peer `hop` steps from the socket is trusted. */
export type TrustFn = (address: string, hop: number) => boolean;

/** As Fastify reads `trustProxy`: a hop count, or addresses and ranges (`proxy-addr`). */
export function trustOf(trustProxy: number | string[]): TrustFn {
  return typeof trustProxy === 'number' ? (_address, hop) => hop < trustProxy : proxyAddr.compile(trustProxy);
}

interface Warner {
  warn(message: unknown, context?: string): void;
}

const WINDOW_MS = 60_000;
// Below this, one busy client is no sign of anything.
const MIN_REQUESTS = 1_000;
const HOT_SHARE = 0.5;
// A bucket over half the traffic shows up long before this many others.
const MAX_BUCKETS = 10_000;
// The peers that send X-Forwarded-For are a few proxies.
const MAX_PEERS = 1_024;

const untrustedForwardedFor = new Counter({
  name: 'petstore_untrusted_forwarded_for_total',
  help: 'Requests carrying X-Forwarded-For from a peer TRUST_PROXY does not trust (the header was ignored)',
});

const topAddressShare = new Gauge({
  name: 'petstore_client_address_top_share',
  help: 'Share of the busiest client address in the last minute with at least 1000 requests (else 0); near 1 means a proxy is not trusted',
});

// Says when TRUST_PROXY does not match the deployment, at most once a minute each: X-Forwarded-For
// from an untrusted peer, or one address taking most traffic (every client seen as the proxy).
export class ProxyTrustWatch {
  private windowEnd = 0;
  private total = 0;
  private top = 0;
  private topBucket = '';
  private buckets = new Map<string, number>();
  private readonly peers = new Map<string, boolean>();
  private untrustedSinceWarning = 0;
  private lastUntrustedWarning = -Infinity;

  /** Its provider's factory. */
  static of(config: AppConfig, clock: Clock): ProxyTrustWatch {
    return new ProxyTrustWatch(trustOf(config.trustProxy), clock, new Logger(ProxyTrustWatch.name));
  }

  constructor(
    private readonly trusted: TrustFn,
    private readonly clock: Clock,
    private readonly logger: Warner,
  ) {}

  observe(req: Pick<FastifyRequest, 'headers' | 'socket' | 'ip'>): void {
    const now = this.clock.nowMs();
    if (now >= this.windowEnd) this.roll(now);
    if (req.headers['x-forwarded-for'] !== undefined && !this.peerTrusted(req.socket.remoteAddress ?? ''))
      this.untrusted(req.socket.remoteAddress ?? '', now);
    const bucket = addressBucket(req.ip);
    const seen = this.buckets.get(bucket);
    this.total++;
    if (seen === undefined && this.buckets.size >= MAX_BUCKETS) return;
    const n = (seen ?? 0) + 1;
    this.buckets.set(bucket, n);
    if (n > this.top) {
      this.top = n;
      this.topBucket = bucket;
    }
  }

  private peerTrusted(peer: string): boolean {
    let trusted = this.peers.get(peer);
    if (trusted === undefined) {
      if (this.peers.size >= MAX_PEERS) this.peers.clear();
      trusted = this.trusted(peer, 0);
      this.peers.set(peer, trusted);
    }
    return trusted;
  }

  private untrusted(peer: string, now: number): void {
    untrustedForwardedFor.inc();
    this.untrustedSinceWarning++;
    if (now - this.lastUntrustedWarning < WINDOW_MS) return;
    this.logger.warn(
      { peer, requests: this.untrustedSinceWarning },
      'X-Forwarded-For from a peer TRUST_PROXY does not trust, ignored: is the proxy in front of the API in TRUST_PROXY?',
    );
    this.lastUntrustedWarning = now;
    this.untrustedSinceWarning = 0;
  }

  private roll(now: number): void {
    const share = this.total >= MIN_REQUESTS ? this.top / this.total : 0;
    topAddressShare.set(share);
    if (share > HOT_SHARE)
      this.logger.warn(
        { address: this.topBucket, requests: this.total, share: Math.round(share * 100) / 100 },
        'one client address sent most requests of the last minute: if it is a proxy, add it to TRUST_PROXY',
      );
    this.windowEnd = now + WINDOW_MS;
    this.total = 0;
    this.top = 0;
    this.topBucket = '';
    this.buckets = new Map();
  }
}
