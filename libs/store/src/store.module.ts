import { Module } from '@nestjs/common';
import { FulfilmentService } from './fulfilment.service';
import { InventoryService } from './inventory.service';
import { OrdersService } from './orders.service';
import { OrdersSweepSource } from './orders.sweep';

/** The store: orders (placed by the API, fulfilled by the worker) and inventory. */
@Module({
  providers: [OrdersService, InventoryService, FulfilmentService, OrdersSweepSource],
  exports: [OrdersService, InventoryService, FulfilmentService],
})
export class StoreModule {}
