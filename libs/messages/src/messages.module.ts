import { Module } from '@nestjs/common';
import { MessageProcessingService } from './message-processing.service';
import { MessagesService } from './messages.service';
import { MessagesRetentionSource } from './messages.retention';
import { MessagesSweepSource } from './messages.sweep';

/** Messages: accepted by the API (MessagesService), processed by the worker (MessageProcessingService). */
@Module({
  providers: [MessagesService, MessageProcessingService, MessagesSweepSource, MessagesRetentionSource],
  exports: [MessagesService, MessageProcessingService],
})
export class MessagesModule {}
