import { Module } from '@nestjs/common';
import { OutboxModule } from '@app/outbox';
import { PetsController } from './pets.controller';
import { PetsService } from './pets.service';

@Module({ imports: [OutboxModule], controllers: [PetsController], providers: [PetsService] })
export class PetsModule {}
