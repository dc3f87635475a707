import { Module } from '@nestjs/common';
import { OutboxModule } from '@app/outbox';
import { CategoriesController } from './categories.controller';
import { CategoriesService } from './categories.service';

@Module({ imports: [OutboxModule], controllers: [CategoriesController], providers: [CategoriesService] })
export class CategoriesModule {}
