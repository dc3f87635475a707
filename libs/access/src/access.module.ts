import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountEntity } from './account.entity';
import { AccountsService } from './accounts.service';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeysService } from './api-keys.service';
import { LegacyKeyPrefixes } from './legacy-key-prefixes';
import { SharedKeyMemory } from './shared-key-memory';
import { PlanRateLimiter } from './plan-rate-limiter';
import { UsageIndex } from './usage-counters';

/** Who may call, and how much: accounts, API keys and their authentication, plan limits and quotas. */
@Module({
  imports: [TypeOrmModule.forFeature([AccountEntity, ApiKeyEntity])],
  providers: [
    ApiKeyAuthenticator,
    SharedKeyMemory,
    LegacyKeyPrefixes,
    ApiKeysService,
    AccountsService,
    PlanRateLimiter,
    UsageIndex,
  ],
  exports: [ApiKeyAuthenticator, ApiKeysService, AccountsService, PlanRateLimiter, UsageIndex],
})
export class AccessModule {}
