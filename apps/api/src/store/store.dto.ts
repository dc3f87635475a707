import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, Max, Min } from 'class-validator';
import { DATE_TIME_RULE, IsDateTime, IsOptional } from '@app/errors';
import { PET_STATUSES, PetStatus } from '@app/catalog';
import { references } from '../openapi/api-errors.decorator';
import { BooleanParam, IntParam, PageQuery } from '../common/pagination';
import { EventPayloadSchema } from '../openapi/event-payloads';

const MAX_ID = Number.MAX_SAFE_INTEGER;
export const MAX_STOCK = 1_000_000_000;
export const MAX_ORDER_QUANTITY = 10_000;

@ApiSchema({ name: 'InventoryItem' })
export class InventoryItemSchema {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'ID of the animal this entry tracks' })
  petId!: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Current stock count' }) quantity!: number;
  @ApiProperty({ enum: PET_STATUSES, enumName: 'PetStatus', description: 'Status of the animal (derived)' })
  status!: PetStatus;
}

@ApiSchema({ name: 'InventoryUpdate' })
export class InventoryUpdateDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_STOCK, description: 'The new stock count' })
  @IsInt()
  @Min(0)
  @Max(MAX_STOCK)
  quantity!: number;
}

export class InventoryListQuery extends PageQuery {
  @ApiPropertyOptional({ enum: PET_STATUSES, enumName: 'PetStatus' })
  @IsOptional()
  @IsIn(PET_STATUSES)
  status?: PetStatus;
}

@ApiSchema({ name: 'NewOrder' })
export class NewOrderDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    ...references('Pet'),
    description: 'ID of the animal to order',
  })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  petId!: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_ORDER_QUANTITY, default: 1 })
  @IsInt()
  @Min(1)
  @Max(MAX_ORDER_QUANTITY)
  quantity: number = 1;

  @ApiPropertyOptional({
    format: 'date-time',
    type: String,
    description: `Requested ship date: fulfilment waits until then when it is in the future (a past one ships at once). ${DATE_TIME_RULE}`,
  })
  @IsOptional()
  @IsDateTime()
  shipDate?: string;
}

@ApiSchema({ name: 'Order' })
export class OrderSchema {
  @ApiPropertyOptional({ type: 'integer', format: 'int64', description: 'Unique order identifier' }) id!: number;
  @ApiPropertyOptional({ type: 'integer', format: 'int64', description: 'ID of the animal in this order' })
  petId!: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Number of units ordered' }) quantity!: number;
  @ApiPropertyOptional({
    format: 'date-time',
    type: String,
    description: 'Expected or actual ship date (absent until requested or shipped)',
  })
  shipDate?: string;
  @ApiPropertyOptional({ description: 'Whether the order has been fulfilled' }) complete!: boolean;
}

export class OrderListQuery extends PageQuery {
  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @BooleanParam()
  @IsBoolean()
  complete?: boolean;

  @ApiPropertyOptional({ type: 'integer', format: 'int64', minimum: 1 })
  @IsOptional()
  @IntParam()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  petId?: number;
}

@EventPayloadSchema('InventoryChange', "A pet's stock after a change, with the stock before")
export class InventoryChangeSchema {
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, description: 'The pet', example: 42 })
  petId!: number;
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, description: 'Units in stock now', example: 3 })
  quantity!: number;
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, description: 'Units in stock before', example: 1 })
  previousQuantity!: number;
}
