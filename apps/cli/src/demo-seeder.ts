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

  async seed(): Promise<{ accountId: number; apiKey: string } | 'off' | null> {
    if (!this.config.demoSeed) return 'off';
    const [{ count }] = await preparedQuery<{ count: number }>(this.dataSource, accountQueries.count());
    if (count > 0) return null;
    const { account, key } = await this.accounts.create('Demo', 'pro');
    return { accountId: account.id, apiKey: key.secret };
  }
}
