import { Module } from '@nestjs/common';
import { AccountsService } from './accounts.service';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ApiKeysService } from './api-keys.service';
import { OutboxModule } from '@app/outbox';

@Module({
  imports: [OutboxModule],
  providers: [ApiKeyAuthenticator, ApiKeysService, AccountsService],
  exports: [ApiKeyAuthenticator, ApiKeysService, AccountsService],
})
export class AuthModule {}
