import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { preparedQuery } from '@app/database';
import { ApiError } from '@app/errors';
import { DomainUnitOfWork } from '@app/events';
import { AccountEntity, Plan, PLANS } from './account.entity';
import { ApiKeysService, IssuedApiKey, OWNER_SCOPES } from './api-keys.service';

const ACCOUNT_COLUMNS = `id, name, plan, limit_per_minute AS "limitPerMinute", limit_per_day AS "limitPerDay",
  created_at AS "createdAt"`;

export interface AccountLimits {
  limitPerMinute?: number | null;
  limitPerDay?: number | null;
}

@Injectable()
export class AccountsService {
  constructor(
    private readonly uow: DomainUnitOfWork,
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
        `INSERT INTO accounts (name, plan, limit_per_minute, limit_per_day) VALUES ($1, $2, $3, $4)
         RETURNING ${ACCOUNT_COLUMNS}`,
        [name, plan, checked.limitPerMinute, checked.limitPerDay],
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
      `UPDATE accounts SET plan = $2, limit_per_minute = $3, limit_per_day = $4 WHERE id = $1
       RETURNING ${ACCOUNT_COLUMNS}`,
      [accountId, plan, checked.limitPerMinute, checked.limitPerDay],
    );
    if (!account) throw ApiError.notFound('Account');
    await this.keys.broadcast({ accountId });
    return account;
  }

  list(limit: number, afterId = 0): Promise<AccountEntity[]> {
    return preparedQuery<AccountEntity>(
      this.dataSource,
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id > $1 ORDER BY id LIMIT $2`,
      [afterId, limit],
    );
  }

  async get(accountId: number): Promise<AccountEntity> {
    const [found] = await preparedQuery<AccountEntity>(
      this.dataSource,
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`,
      [accountId],
    );
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
