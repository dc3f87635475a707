import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { preparedQuery } from '@app/database';
import { ApiError } from '@app/errors';
import { UnitOfWork } from '@app/transactions';
import { AccountEntity, Plan, PLANS } from './account.entity';
import { ApiKeysService, IssuedApiKey, OWNER_SCOPES } from './api-keys.service';
import { accountQueries } from './access.queries';

export interface AccountLimits {
  limitPerMinute?: number | null;
  limitPerDay?: number | null;
}

@Injectable()
export class AccountsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly dataSource: DataSource,
    private readonly keys: ApiKeysService,
  ) {}

  /** With the owner's first key (it can manage keys), in one transaction. */
  async create(
    name: string,
    plan: Plan,
    limits: AccountLimits = {},
  ): Promise<{ account: AccountEntity; key: IssuedApiKey }> {
    const checked = checkPlan(plan, limits);
    const created = await this.uow.run(async (tx) => {
      const [account] = await preparedQuery<AccountEntity>(
        tx.manager,
        accountQueries.insert({ name, plan, ...checked }),
      );
      const key = await this.keys.issue(tx, account.id, { name: 'default', scopes: OWNER_SCOPES });
      return { account, key };
    });
    return { ...created, key: await this.keys.primed(created.key) };
  }

  async setPlan(accountId: number, plan: Plan, limits: AccountLimits = {}): Promise<AccountEntity> {
    const checked = checkPlan(plan, limits);
    const [account] = await preparedQuery<AccountEntity>(
      this.dataSource,
      accountQueries.setPlan(accountId, { plan, ...checked }),
    );
    if (!account) throw ApiError.notFound('Account');
    await this.keys.broadcast({ accountId });
    return account;
  }

  list(limit: number, afterId = 0): Promise<AccountEntity[]> {
    return preparedQuery<AccountEntity>(this.dataSource, accountQueries.page(afterId, limit));
  }

  async get(accountId: number): Promise<AccountEntity> {
    const [found] = await preparedQuery<AccountEntity>(this.dataSource, accountQueries.get(accountId));
    if (!found) throw ApiError.notFound('Account');
    return found;
  }
}

// The limit columns are Postgres integers.
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
