import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDate,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
} from 'class-validator';
import { Transform } from 'class-transformer';
import { SCOPES, Scope } from '@app/database';
import { toDateTime } from '@app/errors';

export class NewApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'ci deploy' })
  @IsString()
  @Length(1, 100)
  name!: string;

  @ApiPropertyOptional({
    type: [String],
    enum: SCOPES,
    minItems: 1,
    maxItems: 2,
    default: ['read', 'write'],
    description: '`read`: GET only; `write`: everything',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(2)
  @IsIn(SCOPES, { each: true })
  scopes?: Scope[];

  @ApiPropertyOptional({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When the key stops working; must be in the future (absent or null: never)',
  })
  @IsOptional()
  @Transform(toDateTime)
  @IsDate()
  expiresAt?: Date;
}

export class RotateApiKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 2_592_000,
    default: 86_400,
    description: 'How long the old secret keeps working',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2_592_000)
  gracePeriodSeconds?: number;
}

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

export class IssuedApiKeySchema extends ApiKeySchema {
  @ApiProperty({ description: 'The secret: shown once, never again' }) secret!: string;
}
