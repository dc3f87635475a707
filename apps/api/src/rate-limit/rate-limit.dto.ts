import { ApiProperty } from '@nestjs/swagger';

export class RateLimitWindow {
  @ApiProperty({ enum: ['minute', 'day'] }) name!: string;
  @ApiProperty({ type: 'integer' }) limit!: number;
  @ApiProperty({ type: 'integer' }) used!: number;
  @ApiProperty({ type: 'integer' }) remaining!: number;
  @ApiProperty({ type: 'integer', description: 'Unix seconds' }) reset!: number;
}

export class RateLimitStatus {
  @ApiProperty({ type: RateLimitWindow }) minute!: RateLimitWindow;
  @ApiProperty({ type: RateLimitWindow }) day!: RateLimitWindow;
  @ApiProperty() banned!: boolean;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Seconds left on a ban' }) banSecondsLeft!:
    number | null;
}
