import { ApiProperty, ApiSchema } from '@nestjs/swagger';

class AccountLimits {
  @ApiProperty({ type: 'integer', minimum: 1, example: 60 }) perMinute!: number;
  @ApiProperty({ type: 'integer', minimum: 1, example: 1000 }) perDay!: number;
}

@ApiSchema({ name: 'Account' })
export class AccountView {
  @ApiProperty({ type: 'integer', format: 'int64' }) id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ['free', 'pro', 'business', 'enterprise'] }) plan!: string;
  @ApiProperty({ type: AccountLimits }) limits!: AccountLimits;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}
