import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsageAggregationService } from './usage-aggregation.service';
import { UsageHistoryService } from './usage-history.service';
import { UsageHourEntity } from './usage-hour.entity';
import { UsageMinuteEntity } from './usage-minute.entity';

@Module({})
export class UsageModule {
  static register(role: 'api' | 'worker'): DynamicModule {
    return {
      module: UsageModule,
      imports: [TypeOrmModule.forFeature([UsageMinuteEntity, UsageHourEntity])],
      providers: [UsageHistoryService, ...(role === 'worker' ? [UsageAggregationService] : [])],
      exports: [UsageHistoryService],
    };
  }
}
