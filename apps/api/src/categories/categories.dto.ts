import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsString, Length, MaxLength } from 'class-validator';
import { IsOptional, SAFE_NAME_PATTERN, SafeName } from '@app/errors';

@ApiSchema({ name: 'NewCategory' })
export class NewCategoryDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 100,
    pattern: SAFE_NAME_PATTERN,
    example: 'Dogs',
    description: 'Category name (a kind of animal); no control, bidi-override or zero-width characters',
  })
  @IsString()
  @Length(1, 100)
  @SafeName()
  name!: string;

  @ApiPropertyOptional({ maxLength: 1000, example: 'Domestic dogs', description: 'Short description of the category' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  description?: string;
}

/** PATCH body: the fields to change; `description: null` removes the description. */
@ApiSchema({ name: 'CategoryUpdate' })
export class CategoryUpdateDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 100, pattern: SAFE_NAME_PATTERN })
  @IsOptional()
  @IsString()
  @Length(1, 100)
  @SafeName()
  name?: string;

  @ApiPropertyOptional({ maxLength: 1000, nullable: true, type: String })
  @IsOptional({ nullable: true })
  @IsString()
  @MaxLength(1000)
  description?: string | null;
}

@ApiSchema({ name: 'Category' })
export class CategorySchema extends NewCategoryDto {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Unique identifier assigned on creation' })
  id!: number;
}
