import { Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { KeyTags } from './api-key-format';
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

@Module({
  imports: [TypeOrmModule.forFeature([AccountEntity, ApiKeyEntity])],
  providers: [
    { provide: KeyTags, useFactory: (config: AppConfig) => new KeyTags(config.apiKeyTagKeys), inject: [AppConfig] },
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
