import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsInt, Min } from 'class-validator';
import { DATE_TIME_RULE, IsDateTime, IsOptional } from '@app/errors';
import { UsageGranularity } from '@app/usage';
import { IntParam } from '../common/pagination';

/** Buckets one answer may hold: a day of minutes, two months of hours, four years of days. */
export const MAX_BUCKETS = 1_500;

const GRANULARITIES: UsageGranularity[] = ['minute', 'hour', 'day'];

export class UsageQueryDto {
  @ApiPropertyOptional({
    format: 'date-time',
    type: String,
    description:
      'Start of the range (inclusive, rounded down to its bucket); must be before `to`, and the range may hold at most ' +
      `${MAX_BUCKETS.toLocaleString('en-US')} buckets of the granularity (else 422 \`invalid_range\`). ` +
      `Default: \`to\` minus 60 minutes, 24 hours or 30 days by granularity. ${DATE_TIME_RULE}`,
  })
  @IsOptional()
  @IsDateTime()
  from?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    type: String,
    description: `End of the range (exclusive, rounded up to a bucket boundary); must be after \`from\`. Default: now. ${DATE_TIME_RULE}`,
  })
  @IsOptional()
  @IsDateTime()
  to?: string;

  @ApiPropertyOptional({
    enum: GRANULARITIES,
    default: 'hour',
    description: 'Bucket size (UTC minutes, hours or days)',
  })
  @IsOptional()
  @IsIn(GRANULARITIES)
  granularity: UsageGranularity = 'hour';

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    description: 'One API key of the account (revoked keys included); the whole account when absent',
  })
  @IsOptional()
  @IntParam()
  @IsInt()
  @Min(1)
  keyId?: number;
}

@ApiSchema({ name: 'UsageLimits' })
class UsageLimits {
  @ApiProperty({ type: 'integer', minimum: 1 }) perMinute!: number;
  @ApiProperty({ type: 'integer', minimum: 1 }) perDay!: number;
}

@ApiSchema({ name: 'UsageBucket' })
export class UsageBucketSchema {
  @ApiProperty({ format: 'date-time', description: 'Start of the bucket (UTC)' }) start!: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Requests admitted by the rate limiter' }) admitted!: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Requests refused with 429 (over a limit or banned)' })
  refused!: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Temporary bans that began' }) bans!: number;
}

@ApiSchema({ name: 'Usage' })
export class UsageSchema {
  @ApiProperty({ enum: GRANULARITIES }) granularity!: UsageGranularity;
  @ApiProperty({ format: 'date-time' }) from!: string;
  @ApiProperty({ format: 'date-time' }) to!: string;
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    nullable: true,
    description: 'The key asked for, or null for the account',
  })
  keyId!: number | null;
  @ApiProperty({ enum: ['free', 'pro', 'business', 'enterprise'] }) plan!: string;
  @ApiProperty({ type: UsageLimits, description: 'The limits of the plan (both windows), for comparison' })
  limits!: UsageLimits;
  @ApiProperty({
    type: [UsageBucketSchema],
    description: 'Every bucket of the range, oldest first, empty ones included',
  })
  buckets!: UsageBucketSchema[];
}
