import { Global, Module } from '@nestjs/common';
import { UnitOfWork } from './unit-of-work.service';

/** Global: every feature writes through UnitOfWork (on JobsModule's outbox dispatch and EventsModule's live events). */
@Global()
@Module({
  providers: [UnitOfWork],
  exports: [UnitOfWork],
})
export class TransactionsModule {}
