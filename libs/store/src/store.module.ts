import { Module } from '@nestjs/common';
import { QueueModule } from '@app/jobs';
import { FulfilmentService } from './fulfilment.service';
import { InventoryService } from './inventory.service';
import { OrdersService } from './orders.service';
import { OrdersSweepSource } from './orders.sweep';
import { FulfilmentQueue } from './store.jobs';

/** The store: orders (placed by the API, fulfilled by the worker) and inventory. */
@Module({
  imports: [QueueModule.register(FulfilmentQueue)],
  providers: [OrdersService, InventoryService, FulfilmentService, OrdersSweepSource],
  exports: [OrdersService, InventoryService, FulfilmentService],
})
export class StoreModule {}
