import { Module } from '@nestjs/common';
import { AccessModule } from '@app/access';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { EVENTS_WORKER, EventsModule } from '@app/events';
import { JobsModule } from '@app/jobs';
import { RedisModule } from '@app/redis';
import { TransactionsModule } from '@app/transactions';
import { DemoSeeder } from './demo-seeder';

@Module({
  imports: [
    ConfigModule,
    DatabaseModule.forRoot('cli'),
    RedisModule,
    JobsModule.register('producer', [EVENTS_WORKER]),
    EventsModule,
    TransactionsModule,
    AccessModule,
  ],
  providers: [DemoSeeder],
})
export class CliModule {}
