import { Module } from '@nestjs/common';
import { CategoriesService } from './categories.service';
import { PetsService } from './pets.service';

/** The catalog: pets, categories and the pet status rule. */
@Module({
  providers: [PetsService, CategoriesService],
  exports: [PetsService, CategoriesService],
})
export class CatalogModule {}
