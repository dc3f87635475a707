import { Module } from '@nestjs/common';
import { AuthModule } from '@app/auth';
import { ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { OutboxModule } from '@app/outbox';
import { QueuesModule } from '@app/queues';
import { RedisModule } from '@app/redis';
import { DemoSeeder } from './demo-seeder';

@Module({
  imports: [ConfigModule, DatabaseModule, RedisModule, QueuesModule.register('producer'), OutboxModule, AuthModule],
  providers: [DemoSeeder],
})
export class CliModule {}
