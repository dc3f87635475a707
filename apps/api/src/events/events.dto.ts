import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { IsOptional } from '@app/errors';
import { DOMAIN_EVENT_TYPES, DomainEventType } from '@app/events';
import { FeedQuery } from '../common/pagination';

export class ListEventsQuery extends FeedQuery {
  @ApiPropertyOptional({ enum: DOMAIN_EVENT_TYPES, description: 'Only events of this type' })
  @IsOptional()
  @IsIn(DOMAIN_EVENT_TYPES)
  type?: DomainEventType;
}

@ApiSchema({ name: 'Event' })
export class EventSchema {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Increases with time within the account' })
  id!: number;
  @ApiProperty({ enum: DOMAIN_EVENT_TYPES }) type!: string;
  @ApiProperty({ example: 'pet' }) resourceType!: string;
  @ApiProperty({ example: '42', description: 'The id of the resource, as a string' }) resourceId!: string;
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: '1, 2, 3... per resource: order and de-duplicate what you receive with it',
  })
  sequence!: number;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The resource after the change (before it, for a deletion)',
  })
  data!: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}
