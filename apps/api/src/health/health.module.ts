import { Module } from '@nestjs/common';
import { ReadinessService } from '@app/lifecycle';
import { HealthController } from './health.controller';

// Exported for the metrics server, which answers the same probes on METRICS_PORT.
@Module({ controllers: [HealthController], providers: [ReadinessService], exports: [ReadinessService] })
export class HealthModule {}
