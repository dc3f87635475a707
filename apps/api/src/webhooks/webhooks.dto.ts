import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, ApiSchema } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { ApiError, DATE_TIME_RULE, IsDateTime, IsOptional, parseDateTime } from '@app/errors';
import { DOMAIN_EVENT_TYPES, DomainEventType } from '@app/events';
import {
  DEFAULT_WEBHOOK_ROTATION_GRACE_SECONDS,
  MAX_WEBHOOK_ROTATION_GRACE_SECONDS,
  RECOVER_LIMIT,
  RESPONSE_EXCERPT_BYTES,
} from '@app/webhooks';

const URL_DOC =
  'http or https, without credentials; hosts resolving to private, loopback, link-local or reserved addresses are refused';

/** A webhook's `events`, documented and validated alike when creating and changing it. */
const WebhookEvents = (presence: 'required' | 'optional') => {
  const schema: ApiPropertyOptions = {
    type: [String],
    enum: DOMAIN_EVENT_TYPES,
    minItems: 1,
    maxItems: DOMAIN_EVENT_TYPES.length,
    uniqueItems: true,
    description: 'The event types to deliver; `api_key.*` ones need a key with the `admin` scope',
  };
  return applyDecorators(
    ...(presence === 'required' ? [ApiProperty(schema)] : [ApiPropertyOptional(schema), IsOptional()]),
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(DOMAIN_EVENT_TYPES.length),
    ArrayUnique(),
    IsIn(DOMAIN_EVENT_TYPES, { each: true }),
  );
};

@ApiSchema({ name: 'NewWebhook' })
export class NewWebhookDto {
  @ApiProperty({
    maxLength: 2048,
    format: 'uri',
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
    example: 'https://example.com/petstore/webhooks',
    description: URL_DOC,
  })
  @IsString()
  @MaxLength(2048)
  url!: string;

  @WebhookEvents('required')
  events!: DomainEventType[];

  @ApiPropertyOptional({ maxLength: 500, example: 'Order sync to the warehouse', description: 'A note for people' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;
}

/** PATCH body: the fields to change; `description: null` removes the description. */
@ApiSchema({ name: 'WebhookUpdate' })
export class WebhookUpdateDto {
  @ApiPropertyOptional({
    maxLength: 2048,
    format: 'uri',
    pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
    description: `${URL_DOC}, and so is a host that does not resolve`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @WebhookEvents('optional')
  events?: DomainEventType[];

  @ApiPropertyOptional({ maxLength: 500, nullable: true, type: String })
  @IsOptional({ nullable: true })
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({
    description: '`false` disables the webhook (no deliveries but tests and resends); `true` re-enables it',
  })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

@ApiSchema({ name: 'RotateWebhookSecret' })
export class RotateWebhookSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_WEBHOOK_ROTATION_GRACE_SECONDS,
    default: DEFAULT_WEBHOOK_ROTATION_GRACE_SECONDS,
    description: 'How long deliveries stay signed with the replaced secret too, at most 7 days',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_WEBHOOK_ROTATION_GRACE_SECONDS)
  gracePeriodSeconds?: number;
}

@ApiSchema({ name: 'RecoverWebhook' })
export class RecoverWebhookDto {
  @ApiProperty({
    format: 'date-time',
    example: '2026-05-01T08:00:00Z',
    description: `Resend the events whose deliveries since then all failed. ${DATE_TIME_RULE}`,
  })
  @IsDateTime()
  since!: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-05-01T09:30:00Z',
    description: `With it, only the events whose first delivery to this webhook was made before then: an incident's window (\`since\` to \`until\`) replayed alone. After \`since\`. ${DATE_TIME_RULE}`,
  })
  @IsOptional()
  @IsDateTime()
  until?: string;
}

/** The window's instants (IsDateTime has checked that each text names one); `until` after `since`. */
export function recoverWindowOf({ since, until }: RecoverWebhookDto): { since: Date; until: Date | null } {
  const from = parseDateTime(since);
  if (!from) throw ApiError.validation('since', 'must name a date and time that exist');
  if (until === undefined) return { since: from, until: null };
  const to = parseDateTime(until);
  if (!to) throw ApiError.validation('until', 'must name a date and time that exist');
  // Each field valid alone: the window they make is not (as GET /usage's from and to).
  if (to.getTime() <= from.getTime())
    throw new ApiError('invalid_range', 'until: must be after since', [
      { field: 'until', message: 'must be after since' },
    ]);
  return { since: from, until: to };
}

@ApiSchema({ name: 'RecoveredWebhook' })
export class RecoveredWebhookSchema {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: RECOVER_LIMIT,
    description: 'Events queued again, each as a new delivery',
  })
  queued!: number;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Events with failed deliveries not resent: of types the webhook no longer receives',
  })
  skipped!: number;
  @ApiProperty({
    description: `More events were left to resend than the plan queues a call (${RECOVER_LIMIT.toLocaleString('en')} at most): call again with the same \`since\` (and \`until\`) for the next ones`,
  })
  more!: boolean;
}

@ApiSchema({ name: 'Webhook' })
export class WebhookSchema {
  @ApiProperty({ type: 'integer', format: 'int64' }) id!: number;
  @ApiProperty() url!: string;
  @ApiProperty({ type: [String], enum: DOMAIN_EVENT_TYPES }) events!: string[];
  @ApiProperty({ type: String, nullable: true, maxLength: 500 }) description!: string | null;
  @ApiProperty({
    enum: ['active', 'disabled'],
    description:
      '`disabled` after deliveries failed for WEBHOOK_MAX_AGE_SECONDS (a webhook.disabled event says so), or by PATCH `enabled: false`',
  })
  status!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) disabledAt!: string | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Until then deliveries are also signed with the secret the last rotation replaced',
  })
  previousSecretExpiresAt!: string | null;
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
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 0,
    description: 'How long the last attempt took, in ms, to the end of the answer',
  })
  lastDurationMs!: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: RESPONSE_EXCERPT_BYTES,
    description: `The first ${RESPONSE_EXCERPT_BYTES} bytes of the last answer's body (as UTF-8), null without an answer`,
  })
  lastResponseExcerpt!: string | null;
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    description: 'The delivery this one resends (POST .../resend), null for a first delivery',
  })
  resendOf!: number | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) lastAttemptAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'When the next retry is due' })
  nextAttemptAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) deliveredAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}

@ApiSchema({ name: 'DeliveryAttempt' })
export class DeliveryAttemptSchema {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'Its number, from 1; the cursor of the next page' })
  attempt!: number;
  @ApiProperty({ format: 'date-time' }) attemptedAt!: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 503,
    description: 'The HTTP status of the answer, if one came back',
  })
  statusCode!: number | null;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    example: 148,
    description: 'How long the attempt took, in ms, to the end of the answer (or the failure)',
  })
  durationMs!: number;
  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: RESPONSE_EXCERPT_BYTES,
    example: 'upstream unavailable, try later',
    description: `The first ${RESPONSE_EXCERPT_BYTES} bytes of the answer's body (as UTF-8), null without an answer`,
  })
  responseExcerpt!: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'HTTP 503',
    description: 'Why the attempt failed, in a few words; null when it was delivered',
  })
  error!: string | null;
}
