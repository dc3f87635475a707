import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DomainEventEntity } from './domain-event.entity';
import { EventSequenceEntity } from './event-sequence.entity';
import { QueueModule } from '@app/jobs';
import { EventQueue } from './event.jobs';
import { EventsService } from './events.service';
import { EventsRetentionSource } from './events.retention';
import { EventsSweepSource } from './events.sweep';
import { DomainUnitOfWork } from './domain-unit-of-work.service';
import { LiveEvents } from './live-events';
import { EventStreams } from './event-streams';

/** Global: every feature's writes, jobs and events commit together through DomainUnitOfWork. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([DomainEventEntity, EventSequenceEntity]), QueueModule.register(EventQueue)],
  providers: [
    DomainUnitOfWork,
    EventsService,
    EventsSweepSource,
    EventsRetentionSource,
    LiveEvents,
    EventStreams,
  ],
  exports: [DomainUnitOfWork, EventsService, EventStreams],
})
export class EventsModule {}
