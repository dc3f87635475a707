import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Account, Plan, PLANS } from '@app/database';
import { ApiError } from '@app/errors';
import { TransactionService } from '@app/outbox';
import { ApiKeysService, IssuedApiKey } from './api-keys.service';

export interface AccountLimits {
  limitPerMinute?: number | null;
  limitPerDay?: number | null;
}

/** Account creation and plan changes (operator CLI). */
@Injectable()
export class AccountsService {
  constructor(
    private readonly tx: TransactionService,
    private readonly dataSource: DataSource,
    private readonly keys: ApiKeysService,
  ) {}

  /** Creates the account and its first key in one transaction. */
  async create(name: string, plan: Plan, limits: AccountLimits = {}): Promise<{ account: Account; key: IssuedApiKey }> {
    const checked = checkPlan(plan, limits);
    return this.tx.run(async (tx) => {
      const account = tx.manager.getRepository(Account).create({ name, plan, ...checked });
      await tx.manager.save(account);
      const key = await this.keys.issue(tx, account.id, { name: 'default' });
      return { account, key };
    });
  }

  async setPlan(accountId: number, plan: Plan, limits: AccountLimits = {}): Promise<Account> {
    const checked = checkPlan(plan, limits);
    const account = await this.tx.run(async ({ manager }) => {
      const found = await manager.getRepository(Account).findOneBy({ id: accountId });
      if (!found) throw ApiError.notFound('Account');
      Object.assign(found, { plan, ...checked });
      return manager.save(found);
    });
    await this.keys.broadcast({ accountId });
    return account;
  }

  async get(accountId: number): Promise<Account> {
    const found = await this.dataSource.getRepository(Account).findOneBy({ id: accountId });
    if (!found) throw ApiError.notFound('Account');
    return found;
  }
}

/** The limit columns are Postgres integers. */
const MAX_LIMIT = 2_147_483_647;

/** Enterprise needs both limits > 0; other plans take none (their limits are fixed). */
export function checkPlan(
  plan: Plan,
  limits: AccountLimits,
): { limitPerMinute: number | null; limitPerDay: number | null } {
  if (!PLANS.includes(plan)) throw ApiError.validation('plan', `must be one of ${PLANS.join(', ')}`);
  const { limitPerMinute, limitPerDay } = limits;
  if (plan !== 'enterprise') {
    if (limitPerMinute != null || limitPerDay != null) {
      throw ApiError.validation('plan', 'only enterprise accounts take custom limits');
    }
    return { limitPerMinute: null, limitPerDay: null };
  }
  for (const [field, v] of [
    ['limitPerMinute', limitPerMinute],
    ['limitPerDay', limitPerDay],
  ] as const) {
    if (!Number.isInteger(v) || (v as number) <= 0 || (v as number) > MAX_LIMIT)
      throw ApiError.validation(field, `enterprise accounts need a positive integer limit (at most ${MAX_LIMIT})`);
  }
  return { limitPerMinute: limitPerMinute as number, limitPerDay: limitPerDay as number };
}
