export interface AccountSlotsOptions {
  /** Reads of one account running at once. */
  concurrency: number;
  /** Share of the time one account's reads may fill, on average (0.25: a quarter); unset: no pacing. */
  share?: number;
  /** Read time (ms) an idle account may spend at once before its share applies. */
  burstMs?: number;
}

interface Account {
  active: number;
  waiting: (() => void)[];
  /** Read time (ms) the account may still spend; below zero, what it has overspent. */
  credit: number;
  at: number;
  timer?: NodeJS.Timeout;
}

/**
 * At most `concurrency` of one account's expensive reads run at once in this process, and over time
 * they fill at most `share` of the clock (a token bucket of read time, `burstMs` deep); the others
 * wait their turn, in order, without holding a database connection. One tenant's flood of name
 * searches then occupies part of one connection and core, not the pool or the machine: other
 * tenants' requests keep their latency (bench:data, "Noisy neighbour").
 */
export class AccountSlots {
  private readonly accounts = new Map<number, Account>();
  private readonly share: number;
  private readonly burstMs: number;

  constructor(private readonly options: AccountSlotsOptions) {
    this.share = options.share ?? Infinity;
    this.burstMs = options.burstMs ?? 0;
  }

  async run<T>(accountId: number, work: () => Promise<T>): Promise<T> {
    const account = this.account(accountId);
    await new Promise<void>((resolve) => {
      account.waiting.push(resolve);
      this.startWaiting(accountId, account);
    });
    const started = Date.now();
    try {
      return await work();
    } finally {
      this.refill(account);
      account.credit -= Date.now() - started;
      account.active--;
      this.startWaiting(accountId, account);
    }
  }

  /** Reads of `accountId` running or waiting (for tests and metrics). */
  load(accountId: number): { active: number; waiting: number } {
    const account = this.accounts.get(accountId);
    return { active: account?.active ?? 0, waiting: account?.waiting.length ?? 0 };
  }

  /** Accounts this process keeps a balance for (for tests and metrics). */
  get tracked(): number {
    return this.accounts.size;
  }

  private account(accountId: number): Account {
    let account = this.accounts.get(accountId);
    if (!account) this.accounts.set(accountId, (account = { active: 0, waiting: [], credit: this.burstMs, at: Date.now() }));
    return account;
  }

  /** Without a share the credit is always whole again; with one it grows with the clock up to the burst. */
  private refill(account: Account): void {
    const now = Date.now();
    account.credit =
      this.share === Infinity ? this.burstMs : Math.min(this.burstMs, account.credit + (now - account.at) * this.share);
    account.at = now;
  }

  /** Starts waiters while slots are free and the account owes no time; else sets a timer for when it will. */
  private startWaiting(accountId: number, account: Account): void {
    clearTimeout(account.timer);
    this.refill(account);
    while (account.waiting.length && account.active < this.options.concurrency) {
      if (account.credit < 0) {
        account.timer = setTimeout(() => this.startWaiting(accountId, account), -account.credit / this.share).unref();
        return;
      }
      account.active++;
      (account.waiting.shift() as () => void)();
    }
    if (account.active || account.waiting.length) return;
    // An idle account is forgotten once its credit is whole again, so forgetting gives it nothing.
    const untilWhole = (this.burstMs - account.credit) / this.share;
    if (untilWhole <= 0) this.accounts.delete(accountId);
    else account.timer = setTimeout(() => this.accounts.delete(accountId), untilWhole).unref();
  }
}
