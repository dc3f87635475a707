import { Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** GET /events: the account's domain event log. */
@Module({
  controllers: [EventsController],
  providers: [EventsService],
})
export class EventsModule {}
