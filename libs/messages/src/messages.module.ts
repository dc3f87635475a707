import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessageEntity } from './message.entity';
import { QueueModule } from '@app/jobs';
import { MessageQueue } from './message.jobs';
import { MessageProcessingService } from './message-processing.service';
import { MessagesService } from './messages.service';
import { MessagesRetentionSource } from './messages.retention';
import { MessagesSweepSource } from './messages.sweep';

@Module({
  imports: [TypeOrmModule.forFeature([MessageEntity]), QueueModule.register(MessageQueue)],
  providers: [MessagesService, MessageProcessingService, MessagesSweepSource, MessagesRetentionSource],
  exports: [MessagesService, MessageProcessingService],
})
export class MessagesModule {}
