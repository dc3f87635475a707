import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiSchema, ApiTags } from '@nestjs/swagger';
import { AccountsService, AuthContext } from '@app/access';
import { limitsFor } from '@app/access';
import { Auth } from '../gate/auth.decorator';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { Policy } from '../policy/route-policy.decorator';

class AccountLimits {
  @ApiProperty({ type: 'integer', minimum: 1, example: 60 }) perMinute!: number;
  @ApiProperty({ type: 'integer', minimum: 1, example: 1000 }) perDay!: number;
}

@ApiSchema({ name: 'Account' })
export class AccountView {
  @ApiProperty({ type: 'integer', format: 'int64' }) id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['free', 'pro', 'business', 'enterprise'] }) plan!: string;
  @ApiProperty({ type: AccountLimits }) limits!: AccountLimits;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}

@ApiTags('Account')
@Controller('account')
export class AccountController {
  constructor(private readonly accounts: AccountsService) {}

  @Get()
  @Policy({ scope: 'any' })
  @ApiOperation({
    operationId: 'getAccount',
    summary: 'The account of the calling key, with its plan limits',
    description:
      'The account the API key belongs to: its plan and the per-minute and per-day request limits of that plan. Use it to check which key you are using.',
  })
  @ApiOkResponse({ type: AccountView })
  @ApiErrors()
  async get(@Auth() auth: AuthContext): Promise<AccountView> {
    const a = await this.accounts.get(auth.accountId);
    return { id: a.id, name: a.name, plan: a.plan, limits: limitsFor(a), createdAt: a.createdAt.toISOString() };
  }
}
