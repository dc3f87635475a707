import { Module } from '@nestjs/common';
import { OutboxModule } from '@app/outbox';
import { InventoryController } from './inventory.controller';
import { InventoryService } from './inventory.service';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';

@Module({
  imports: [OutboxModule],
  controllers: [InventoryController, OrdersController],
  providers: [InventoryService, OrdersService],
})
export class StoreModule {}
