import { DynamicModule, Module } from '@nestjs/common';
import { AccessModule } from '@app/access';
import { AppConfig, LoadedConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { EVENTS_WORKER, EventsModule } from '@app/events';
import { JobsModule } from '@app/jobs';
import { RedisModule } from '@app/redis';
import { TransactionsModule } from '@app/transactions';
import { DemoSeeder } from './demo-seeder';

@Module({})
export class CliModule {
  /** On the configuration of the invocation's environment (runCli's `io.env`), not necessarily the process's. */
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [
        LoadedConfigModule.of(config),
        DatabaseModule.forRoot('cli'),
        RedisModule,
        JobsModule.register('producer', [EVENTS_WORKER]),
        EventsModule,
        TransactionsModule,
        AccessModule,
      ],
      providers: [DemoSeeder],
    };
  }
}
