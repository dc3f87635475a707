import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsInt, IsString, Length, Max, Min } from 'class-validator';
import { Transform } from 'class-transformer';
import { MAX_ROTATION_GRACE_SECONDS } from '@app/access';
import { SCOPES, Scope } from '@app/access';
import { DATE_TIME_RULE, IsDateTime, IsOptional, SAFE_NAME_PATTERN, SafeName, toDateTime } from '@app/errors';
import { EventPayloadSchema } from '../openapi/event-payloads';

@ApiSchema({ name: 'NewApiKey' })
export class NewApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 100, pattern: SAFE_NAME_PATTERN, example: 'ci deploy' })
  @IsString()
  @Length(1, 100)
  @SafeName()
  name!: string;

  @ApiPropertyOptional({
    type: [String],
    enum: SCOPES,
    minItems: 1,
    maxItems: 3,
    description:
      '`read`: GET only; `write`: everything but key management; `admin`: key management. At most the ' +
      "calling key's own scopes (else 403 `insufficient_scope`); default: the calling key's `read` and `write`",
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(3)
  @IsIn(SCOPES, { each: true })
  scopes?: Scope[];

  @ApiPropertyOptional({
    format: 'date-time',
    nullable: true,
    type: String,
    description:
      "When the key stops working; in the future and no later than the calling key's expiry (else 422 " +
      "`key_expiry_too_late`). Absent or null: the calling key's expiry (never, if it has none). " +
      DATE_TIME_RULE,
  })
  @IsOptional({ nullable: true })
  @Transform(toDateTime)
  @IsDateTime()
  expiresAt?: Date;
}

@ApiSchema({ name: 'RotateApiKey' })
export class RotateApiKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_ROTATION_GRACE_SECONDS,
    default: 86_400,
    description: 'How long the old secret keeps working, at most 7 days; until then it counts toward the key quota',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_ROTATION_GRACE_SECONDS)
  gracePeriodSeconds?: number;
}

@ApiSchema({ name: 'ApiKey' })
export class ApiKeySchema {
  @ApiProperty({ type: 'integer', format: 'int64' }) id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ description: 'The first characters of the key, for recognising it', example: 'pst_4fQx9a' })
  prefix!: string;
  @ApiProperty({ type: [String], enum: SCOPES }) scopes!: Scope[];
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) expiresAt!: string | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Set on a rotated key: it stops working at this instant',
  })
  rotatedOutAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) lastUsedAt!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}

@ApiSchema({ name: 'IssuedApiKey' })
export class IssuedApiKeySchema extends ApiKeySchema {
  @ApiProperty({ description: 'The secret: shown once, never again' }) secret!: string;
}

@EventPayloadSchema('ApiKeyBan', 'An API key temporarily banned for exceeding its limits')
export class ApiKeyBanSchema {
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, description: 'The key', example: 7 })
  id!: number;
  @ApiProperty({ format: 'date-time', description: 'When the ban began', example: '2026-01-15T09:30:00.000Z' })
  bannedAt!: string;
}
