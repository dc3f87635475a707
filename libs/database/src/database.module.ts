import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions, PoolRole } from './data-source-options';
import { useNamedStatements } from './prepared-query';
import { POOL_ROLE, ReadReplicas } from './read-replicas';
import { TransactionRunner } from './transaction-runner';

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(role: PoolRole): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => {
            useNamedStatements(!config.databaseTransactionPooler);
            return {
              ...dataSourceOptions(config, role),
              // Each feature module registers its tables' entities (TypeOrmModule.forFeature).
              autoLoadEntities: true,
              // The pool reconnects by itself; Nest's retry loop would only delay start-up.
              retryAttempts: 0,
            };
          },
        }),
      ],
      providers: [TransactionRunner, ReadReplicas, { provide: POOL_ROLE, useValue: role }],
      exports: [TransactionRunner, ReadReplicas],
    };
  }
}
