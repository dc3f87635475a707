import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ERROR_CODES } from '@app/errors';

@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailSchema {
  @ApiProperty({ example: 'categoryId' }) field!: string;
  @ApiProperty({ example: 'must name a category of this account' }) message!: string;
}

@ApiSchema({ name: 'Error' })
export class ErrorSchema {
  @ApiProperty({ enum: ERROR_CODES, enumName: 'ErrorCode', description: 'Machine-readable error code' })
  code!: string;

  @ApiProperty({ description: 'Human-readable description' })
  message!: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status code', example: 404 })
  status!: number;

  @ApiPropertyOptional({ type: [ErrorDetailSchema], description: 'The fields or parameters at fault' })
  details?: ErrorDetailSchema[];
}
