/**
 * At most `limit` of one account's expensive reads run at once in this process; the others wait
 * their turn, in order, without holding a database connection. One tenant's flood of name
 * searches then occupies `limit` connections and cores, not the whole pool: other tenants'
 * requests keep their latency (bench:data, "Noisy neighbour").
 */
export class AccountSlots {
  private readonly accounts = new Map<number, { active: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {}

  async run<T>(accountId: number, work: () => Promise<T>): Promise<T> {
    let slots = this.accounts.get(accountId);
    if (!slots) this.accounts.set(accountId, (slots = { active: 0, waiting: [] }));
    if (slots.active < this.limit) slots.active++;
    else await new Promise<void>((resolve) => slots.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = slots.waiting.shift();
      // The slot passes straight to the next waiter; the last one out forgets the account.
      if (next) next();
      else if (--slots.active === 0) this.accounts.delete(accountId);
    }
  }

  /** Reads of `accountId` running or waiting (for tests and metrics). */
  load(accountId: number): { active: number; waiting: number } {
    const slots = this.accounts.get(accountId);
    return { active: slots?.active ?? 0, waiting: slots?.waiting.length ?? 0 };
  }
}
