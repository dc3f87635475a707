import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AccountsService } from '@app/auth';

/** On an empty database only: a demo account (pro plan) whose key is printed once. */
@Injectable()
export class DemoSeeder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
  ) {}

  async seed(): Promise<{ accountId: number; apiKey: string } | null> {
    const [{ count }] = await this.dataSource.query('SELECT count(*)::int AS count FROM accounts');
    if (count > 0) return null;
    const { account, key } = await this.accounts.create('Demo', 'pro');
    return { accountId: account.id, apiKey: key.secret };
  }
}
