import { Global, Module } from '@nestjs/common';
import { IdempotencyStore } from './idempotency.store';

/** Global, so @Idempotent() works in every feature module without further imports. */
@Global()
@Module({ providers: [IdempotencyStore], exports: [IdempotencyStore] })
export class IdempotencyModule {}
