import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { AccountsService, AuthContext } from '@app/access';
import { limitsFor } from '@app/access';
import { Auth } from '../gate/auth.decorator';
import { Policy } from '../policy/route-policy.decorator';
import { AccountView } from './account.dto';
import { GetAccountDocs } from './account.openapi';

@ApiTags('Account')
@Controller('account')
export class AccountController {
  constructor(private readonly accounts: AccountsService) {}

  @Get()
  @Policy({ scope: 'any' })
  @GetAccountDocs()
  async get(@Auth() auth: AuthContext): Promise<AccountView> {
    const a = await this.accounts.get(auth.accountId);
    return { id: a.id, name: a.name, plan: a.plan, limits: limitsFor(a), createdAt: a.createdAt.toISOString() };
  }
}
