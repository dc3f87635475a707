import { Logger } from '@nestjs/common';
import { ApiError } from '@app/errors';

// An address takes at most this fraction of the budget: one client's misses leave the rest to others.
const ADDRESS_SHARE = 1 / 4;
const LOG_EVERY_MS = 1_000;

/** Who needs a Postgres lookup: the client address whose share it takes. */
export interface LookupRequester {
  address: string;
  /** True when the address's anonymous budget is spent or the address is banned. */
  isLimited(): Promise<boolean>;
}

/** The requester's address is limited and had its lookup this second: the address's refusal answers it. */
export class LookupDeclined extends Error {}

export const lookupBusy = () =>
  new ApiError('service_unavailable', 'Too many new API keys are being checked right now; retry shortly', [], {
    'Retry-After': '1',
  });

interface AddressUse {
  running: number;
  /** In the current second. */
  started: number;
}

// So many lookups at once and so many started per second (token bucket of one second), and at most
// a share of both per client address. Beyond it, 503 with Retry-After: 1, which is not a strike: the
// key is not at fault. Refusals are logged at most once a second (a flood of them is one event). A
// limited or banned address gets one lookup a second: enough for a genuine key behind it, nothing for a flood.
export class LookupBudget {
  private readonly logger = new Logger(LookupBudget.name);
  private running = 0;
  private tokens: number;
  private refilledAt: number;
  private readonly byAddress = new Map<string, AddressUse>();
  private second = -1;
  private readonly share: { concurrency: number; perSecond: number };
  private refusedUnlogged = 0;
  private loggedAt = -Infinity;

  constructor(
    private readonly concurrency: number,
    private readonly ratePerSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = ratePerSecond;
    this.refilledAt = now();
    this.share = {
      concurrency: Math.max(1, Math.floor(concurrency * ADDRESS_SHARE)),
      perSecond: Math.max(1, Math.floor(ratePerSecond * ADDRESS_SHARE)),
    };
  }

  /** Call the returned function when done. Without `address`, the whole budget is open. */
  acquire(address?: string, limited = false): () => void {
    const now = this.now();
    this.tokens = Math.min(this.ratePerSecond, this.tokens + ((now - this.refilledAt) * this.ratePerSecond) / 1000);
    this.refilledAt = now;
    const own = address === undefined ? undefined : this.useOf(address, now);
    if (own && limited && (own.running > 0 || own.started > 0)) throw new LookupDeclined();
    if (
      this.running >= this.concurrency ||
      this.tokens < 1 ||
      (own && (own.running >= this.share.concurrency || own.started >= this.share.perSecond))
    ) {
      this.noteRefusal(now);
      throw lookupBusy();
    }
    this.tokens -= 1;
    this.running++;
    if (own) {
      own.running++;
      own.started++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      if (own) own.running--;
    };
  }

  // Counts restart each second; an idle address is forgotten then, so the map holds the second's addresses.
  private useOf(address: string, now: number): AddressUse {
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      for (const [key, use] of this.byAddress) {
        if (use.running === 0) this.byAddress.delete(key);
        else use.started = 0;
      }
    }
    let use = this.byAddress.get(address);
    if (!use) this.byAddress.set(address, (use = { running: 0, started: 0 }));
    return use;
  }

  private noteRefusal(now: number): void {
    this.refusedUnlogged++;
    if (now - this.loggedAt < LOG_EVERY_MS) return;
    this.logger.warn({ refused: this.refusedUnlogged }, 'key lookup budget spent: new keys answered 503');
    this.refusedUnlogged = 0;
    this.loggedAt = now;
  }
}
