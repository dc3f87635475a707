import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions } from './data-source-options';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        ...dataSourceOptions(config),
        // The pool reconnects by itself; Nest's retry loop would only delay start-up.
        retryAttempts: 0,
      }),
    }),
  ],
})
export class DatabaseModule {}
