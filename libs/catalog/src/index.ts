export * from './category.entity';
export * from './pet.entity';
export * from './inputs';
export * from './views';
export * from './pet-status';
export * from './pets.service';
export * from './categories.service';
export * from './catalog.module';
