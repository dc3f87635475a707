import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsString, Length, Max, Min } from 'class-validator';
import { NAME_SEARCH_MIN_LENGTH, PET_STATUSES, PetStatus } from '@app/catalog';
import { IsOptional, MemoizedQuery, SAFE_ID_TEXT, SAFE_NAME_PATTERN, SafeName } from '@app/errors';
import { references } from '../openapi/api-errors.decorator';
import { CommaSeparatedIds, IntParam, MAX_PAGE_SIZE, PageQuery } from '../common/pagination';
import { EventPayloadSchema } from '../openapi/event-payloads';

const MAX_ID = Number.MAX_SAFE_INTEGER;
/** A client may ask for `available` (one unit in stock) or `sold` (none); `pending` is derived only. */
const CHOOSABLE_STATUSES = ['available', 'sold'] as const;
const STATUS_DOC =
  'Derived from stock and orders. On writes only `available` (ensures at least one unit in stock) ' +
  'or `sold` (empties the stock) may be sent; `pending` is refused with 400.';

@ApiSchema({ name: 'NewPet' })
export class NewPetDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    pattern: SAFE_NAME_PATTERN,
    example: 'Rex',
    description: "The animal's name; no control, bidi-override or zero-width characters",
  })
  @IsString()
  @Length(1, 200)
  @SafeName()
  name!: string;

  @ApiProperty({
    type: 'integer',
    format: 'int64',
    ...references('Category'),
    minimum: 1,
    description: 'ID of the category the animal belongs to (a category of this account)',
  })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  categoryId!: number;

  @ApiPropertyOptional({ enum: CHOOSABLE_STATUSES, default: 'available', description: STATUS_DOC })
  @IsOptional()
  @IsIn(CHOOSABLE_STATUSES, { message: 'status must be available or sold (pending is derived, never chosen)' })
  status?: Exclude<PetStatus, 'pending'>;
}

/** PATCH body: the fields to change. */
@ApiSchema({ name: 'PetUpdate' })
export class PetUpdateDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, pattern: SAFE_NAME_PATTERN })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @SafeName()
  name?: string;

  @ApiPropertyOptional({ type: 'integer', format: 'int64', ...references('Category'), minimum: 1 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  categoryId?: number;

  @ApiPropertyOptional({ enum: CHOOSABLE_STATUSES, description: STATUS_DOC })
  @IsOptional()
  @IsIn(CHOOSABLE_STATUSES, { message: 'status must be available or sold (pending is derived, never chosen)' })
  status?: Exclude<PetStatus, 'pending'>;
}

@ApiSchema({ name: 'Pet' })
export class PetSchema {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Unique identifier assigned on creation' })
  id!: number;
  @ApiProperty({ description: "The animal's name" }) name!: string;
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    ...references('Category'),
    description: 'ID of the category the animal belongs to',
  })
  categoryId!: number;
  @ApiProperty({ enum: PET_STATUSES, enumName: 'PetStatus', description: STATUS_DOC }) status!: PetStatus;
}

@MemoizedQuery()
export class PetListQuery extends PageQuery {
  @ApiPropertyOptional({ enum: PET_STATUSES, enumName: 'PetStatus' })
  @IsOptional()
  @IsIn(PET_STATUSES)
  status?: PetStatus;

  @ApiPropertyOptional({ type: 'integer', format: 'int64', ...references('Category'), minimum: 1 })
  @IsOptional()
  @IntParam()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  categoryId?: number;

  @ApiPropertyOptional({
    minLength: NAME_SEARCH_MIN_LENGTH,
    maxLength: 200,
    description:
      'Case-insensitive substring of the name, of at least 3 characters (shorter ones answer 400 `invalid_parameter`: a trigram index serves the search). `%`, `_` and `\\` match themselves. All matches after `after` come in id order, the first ones on the first page.',
  })
  @IsOptional()
  @IsString()
  @Length(NAME_SEARCH_MIN_LENGTH, 200, {
    message: `name must be ${NAME_SEARCH_MIN_LENGTH} to 200 characters (a substring of the pet's name)`,
  })
  name?: string;

  @ApiPropertyOptional({
    type: String,
    example: '1,2,3',
    pattern: `^${SAFE_ID_TEXT}(,${SAFE_ID_TEXT}){0,${MAX_PAGE_SIZE - 1}}$`,
    description: `Comma-separated pet ids (at most ${MAX_PAGE_SIZE})`,
  })
  @IsOptional()
  @CommaSeparatedIds()
  @IsArray()
  @ArrayMaxSize(MAX_PAGE_SIZE)
  @IsInt({ each: true, message: 'ids must be comma-separated positive integers' })
  ids?: number[];
}

@EventPayloadSchema('PetStatusChange', 'A pet after a status change, with the status it had before')
export class PetStatusChangeSchema extends PetSchema {
  @ApiProperty({ enum: PET_STATUSES, enumName: 'PetStatus', description: 'The status before', example: 'available' })
  previousStatus!: PetStatus;
}
