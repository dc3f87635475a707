import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CategoriesService } from './categories.service';
import { CategoryEntity } from './category.entity';
import { PetEntity } from './pet.entity';
import { PetsService } from './pets.service';

/** The catalog: pets, categories and the pet status rule. */
@Module({
  imports: [TypeOrmModule.forFeature([CategoryEntity, PetEntity])],
  providers: [PetsService, CategoriesService],
  exports: [PetsService, CategoriesService],
})
export class CatalogModule {}
