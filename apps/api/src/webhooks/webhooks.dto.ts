import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsString, MaxLength } from 'class-validator';
import { DOMAIN_EVENT_TYPES, DomainEventType } from '@app/events';

@ApiSchema({ name: 'NewWebhook' })
export class NewWebhookDto {
  @ApiProperty({
    maxLength: 2048,
    format: 'uri',
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
    example: 'https://example.com/petstore/webhooks',
    description:
      'http or https, without credentials; hosts resolving to private, loopback, link-local or reserved addresses are refused',
  })
  @IsString()
  @MaxLength(2048)
  url!: string;

  @ApiProperty({
    type: [String],
    enum: DOMAIN_EVENT_TYPES,
    minItems: 1,
    maxItems: DOMAIN_EVENT_TYPES.length,
    uniqueItems: true,
    description: 'The event types to deliver; `api_key.*` ones need a key with the `admin` scope',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(DOMAIN_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(DOMAIN_EVENT_TYPES, { each: true })
  events!: DomainEventType[];
}

@ApiSchema({ name: 'Webhook' })
export class WebhookSchema {
  @ApiProperty({ type: 'integer', format: 'int64' }) id!: number;
  @ApiProperty() url!: string;
  @ApiProperty({ type: [String], enum: DOMAIN_EVENT_TYPES }) events!: string[];
  @ApiProperty({
    enum: ['active', 'disabled'],
    description: '`disabled` after deliveries failed for WEBHOOK_MAX_AGE_SECONDS (a webhook.disabled event says so)',
  })
  status!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) disabledAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}

@ApiSchema({ name: 'CreatedWebhook' })
export class CreatedWebhookSchema extends WebhookSchema {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The Standard Webhooks signing secret (`whsec_` + base64 of 32 bytes): shown in this answer only',
  })
  secret!: string;
}

@ApiSchema({ name: 'Delivery' })
export class DeliverySchema {
  @ApiProperty({ type: 'integer', format: 'int64' }) id!: number;
  @ApiProperty({ type: 'integer', format: 'int64' }) webhookId!: number;
  @ApiProperty({ type: 'integer', format: 'int64', nullable: true, description: 'null for a test delivery' })
  eventId!: number | null;
  @ApiProperty({ example: 'pet.created', description: '`webhook.test` for a test delivery' }) eventType!: string;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] }) status!: string;
  @ApiProperty({ type: 'integer', minimum: 0 }) attempts!: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'HTTP status of the last attempt, if one came back' })
  lastStatusCode!: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'timeout' }) lastError!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) lastAttemptAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'When the next retry is due' })
  nextAttemptAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) deliveredAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}
