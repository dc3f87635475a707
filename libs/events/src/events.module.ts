import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DomainEventEntity } from './domain-event.entity';
import { EventSequenceEntity } from './event-sequence.entity';
import { EventsService } from './events.service';
import { LiveEvents } from './live-events';
import { EventStreams } from './event-streams';

/** Global: the event log every feature's unit of work records into, read by GET /events and the streams. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([DomainEventEntity, EventSequenceEntity])],
  providers: [EventsService, LiveEvents, EventStreams],
  exports: [EventsService, EventStreams, LiveEvents],
})
export class EventsModule {}
