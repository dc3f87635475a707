import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MessageEntity } from './message.entity';
import { MessageProcessingService } from './message-processing.service';
import { MessagesService } from './messages.service';

@Module({
  imports: [TypeOrmModule.forFeature([MessageEntity])],
  providers: [MessagesService, MessageProcessingService],
  exports: [MessagesService, MessageProcessingService],
})
export class MessagesModule {}
