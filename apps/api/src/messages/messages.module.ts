import { Module } from '@nestjs/common';
import { OutboxModule } from '@app/outbox';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';

@Module({ imports: [OutboxModule], controllers: [MessagesController], providers: [MessagesService] })
export class MessagesModule {}
