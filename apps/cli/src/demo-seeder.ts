import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { accountQueries, AccountsService } from '@app/access';
import { AppConfig } from '@app/config';
import { preparedQuery } from '@app/database';

// On an empty database only: its key is printed once. Deployments that run `seed:demo` on every
// start (docker compose) set DEMO_SEED=false there.
@Injectable()
export class DemoSeeder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    private readonly config: AppConfig,
  ) {}

  /**
   * The demo account and its key; 'off' with DEMO_SEED=false; with accounts already there, the demo account's id (else
   * the first account's), so `npm start` can say how to make a new key: the one shown before is never shown again.
   */
  async seed(): Promise<{ accountId: number; apiKey: string } | 'off' | { existingAccountId: number }> {
    if (!this.config.demoSeed) return 'off';
    const [{ count }] = await preparedQuery<{ count: number }>(this.dataSource, accountQueries.count());
    if (count > 0) {
      const first = await this.accounts.list(100);
      return { existingAccountId: (first.find((a) => a.name === 'Demo') ?? first[0]).id };
    }
    const { account, key } = await this.accounts.create('Demo', 'pro');
    return { accountId: account.id, apiKey: key.secret };
  }
}
