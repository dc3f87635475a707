import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsInt, Max, Min } from 'class-validator';
import { IsOptional } from '@app/errors';
import { DOMAIN_EVENT_TYPES, DomainEventType } from '@app/events';
import { FeedQuery, IntParam } from '../common/pagination';

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

const MAX_TYPES = DOMAIN_EVENT_TYPES.length;
const ONE_TYPE = `(${DOMAIN_EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|')})`;

export class StreamEventsQuery {
  @ApiPropertyOptional({
    type: String,
    example: 'pet.created,pet.updated',
    pattern: `^${ONE_TYPE}(,${ONE_TYPE}){0,${MAX_TYPES - 1}}$`,
    description: `Only events of these types, comma-separated (one of: ${DOMAIN_EVENT_TYPES.join(', ')})`,
  })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.split(',') : value))
  @IsArray()
  @ArrayMaxSize(MAX_TYPES)
  @IsIn(DOMAIN_EVENT_TYPES, { each: true, message: `type must name event types, comma-separated` })
  type?: DomainEventType[];

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    description:
      'Resume after this event id: the events since are sent first, then the live ones (`Last-Event-ID` wins when both are sent); 1 sends every event still kept. Unset: live events only',
  })
  @IsOptional()
  @IntParam()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  after?: number;
}
