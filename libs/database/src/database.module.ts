import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions, PoolRole } from './data-source-options';
import { useNamedStatements } from './prepared-query';
import { POOL_ROLE, ReadReplicas } from './read-replicas';
import { TransactionRunner } from './transaction-runner';

// Made once per process, the role injected: @nestjs/typeorm registers a data source's name when
// forRootAsync is called, and a test file that loads both apps' modules called it twice (a warning
// per file). Each application still gets its own data source.
const typeOrm = TypeOrmModule.forRootAsync({
  inject: [AppConfig, POOL_ROLE],
  useFactory: (config: AppConfig, role: PoolRole) => {
    useNamedStatements(!config.databaseTransactionPooler);
    return {
      ...dataSourceOptions(config, role),
      // Each feature module registers its tables' entities (TypeOrmModule.forFeature).
      autoLoadEntities: true,
      // The pool reconnects by itself; Nest's retry loop would only delay start-up.
      retryAttempts: 0,
    };
  },
});

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(role: PoolRole): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [typeOrm],
      providers: [TransactionRunner, ReadReplicas, { provide: POOL_ROLE, useValue: role }],
      exports: [TransactionRunner, ReadReplicas, POOL_ROLE],
    };
  }
}
