import { ApiError } from '@app/errors';

// So many lookups at once and so many started per second (token bucket of one second). Beyond it,
// 503 with Retry-After: 1, which is not a strike: the key is not at fault.
export class LookupBudget {
  private running = 0;
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly concurrency: number,
    private readonly ratePerSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = ratePerSecond;
    this.refilledAt = now();
  }

  /** Call the returned function when done. */
  acquire(): () => void {
    const now = this.now();
    this.tokens = Math.min(this.ratePerSecond, this.tokens + ((now - this.refilledAt) * this.ratePerSecond) / 1000);
    this.refilledAt = now;
    if (this.running >= this.concurrency || this.tokens < 1) {
      throw new ApiError(
        'service_unavailable',
        'Too many new API keys are being checked right now; retry shortly',
        [],
        {
          'Retry-After': '1',
        },
      );
    }
    this.tokens -= 1;
    this.running++;
    let released = false;
    return () => {
      if (!released) this.running--;
      released = true;
    };
  }
}
