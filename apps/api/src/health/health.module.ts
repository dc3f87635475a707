import { Module } from '@nestjs/common';
import { ReadinessService } from '@app/observability';
import { HealthController } from './health.controller';

@Module({ controllers: [HealthController], providers: [ReadinessService] })
export class HealthModule {}
