import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { QueueModule } from '@app/jobs';
import { FulfilmentService } from './fulfilment.service';
import { InventoryService } from './inventory.service';
import { OrderEntity } from './order.entity';
import { OrdersService } from './orders.service';
import { OrdersSweepSource } from './orders.sweep';
import { FulfilmentQueue } from './store.jobs';

/** The store: orders (placed by the API, fulfilled by the worker) and inventory. */
@Module({
  imports: [TypeOrmModule.forFeature([OrderEntity]), QueueModule.register(FulfilmentQueue)],
  providers: [OrdersService, InventoryService, FulfilmentService, OrdersSweepSource],
  exports: [OrdersService, InventoryService, FulfilmentService],
})
export class StoreModule {}
