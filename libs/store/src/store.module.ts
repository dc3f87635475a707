import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FulfilmentService } from './fulfilment.service';
import { InventoryService } from './inventory.service';
import { OrderEntity } from './order.entity';
import { OrdersService } from './orders.service';

/** The store: orders (placed by the API, fulfilled by the worker) and inventory. */
@Module({
  imports: [TypeOrmModule.forFeature([OrderEntity])],
  providers: [OrdersService, InventoryService, FulfilmentService],
  exports: [OrdersService, InventoryService, FulfilmentService],
})
export class StoreModule {}
