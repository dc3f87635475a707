import { Global, Module } from '@nestjs/common';
import { IdempotencyService } from './idempotency.service';
import { IdempotencyStore } from './idempotency.store';

// Global: every feature module's creating POSTs use IdempotencyService without further imports.
@Global()
@Module({ providers: [IdempotencyStore, IdempotencyService], exports: [IdempotencyService] })
export class IdempotencyModule {}
