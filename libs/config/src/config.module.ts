import { DynamicModule, Global, Module } from '@nestjs/common';
import { Clock } from './clock';
import { AppConfig, loadConfig } from './config';

/** Provides the one AppConfig of the process (validated when the module is built) and the Clock. */
@Global()
@Module({
  providers: [{ provide: AppConfig, useFactory: () => loadConfig() }, Clock],
  exports: [AppConfig, Clock],
})
export class ConfigModule {}

/** ConfigModule's providers, with an AppConfig loaded from another environment than the process's (the CLI's `io.env`). */
@Global()
@Module({})
export class LoadedConfigModule {
  static of(config: AppConfig): DynamicModule {
    return {
      module: LoadedConfigModule,
      providers: [{ provide: AppConfig, useValue: config }, Clock],
      exports: [AppConfig, Clock],
    };
  }
}
