// What the commands run on (Nest, TypeORM, the drivers, the apps' libraries): loaded by a command, never
// by `--help` or `--version` (main.ts), which answer without it.
export { NestFactory } from '@nestjs/core';
export { DataSource } from 'typeorm';
export { AccountsService, ApiKeysService } from '@app/access';
export { AppConfig, loadConfig } from '@app/config';
export { maintenanceUrl, migrate } from '@app/database';
export { nameProblem, parseDateTime } from '@app/errors';
export { EventQueue } from '@app/events';
export { dropOldKeyLayout } from '@app/jobs';
export { MessageQueue } from '@app/messages';
export { requirePostgres } from '@app/lifecycle';
export { REDIS } from '@app/redis';
export { FulfilmentQueue } from '@app/store';
export { resealWebhookSecrets, WebhookQueue, WebhookSecretBox } from '@app/webhooks';
export { CliModule } from './cli.module';
export { DemoSeeder } from './demo-seeder';
export { configDir } from './listen-secrets';
export { listen } from './listen.command';
export { NOT_TRIGGERABLE, TRIGGERS, trigger } from './trigger.command';
