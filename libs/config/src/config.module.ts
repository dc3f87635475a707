import { Global, Module } from '@nestjs/common';
import { Clock } from './clock';
import { AppConfig, loadConfig } from './config';

/** Provides the one AppConfig of the process (validated when the module is built) and the Clock. */
@Global()
@Module({
  providers: [{ provide: AppConfig, useFactory: () => loadConfig() }, Clock],
  exports: [AppConfig, Clock],
})
export class ConfigModule {}
