import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RateLimitDecision, WindowState } from '@app/access';
import { OwnBudget, Policy } from '../policy/route-policy.decorator';

class RateLimitWindow {
  @ApiProperty({ enum: ['minute', 'day'] }) name!: string;
  @ApiProperty({ type: 'integer' }) limit!: number;
  @ApiProperty({ type: 'integer' }) used!: number;
  @ApiProperty({ type: 'integer' }) remaining!: number;
  @ApiProperty({ type: 'integer', description: 'Unix seconds' }) reset!: number;
}

class RateLimitStatus {
  @ApiProperty({ type: RateLimitWindow }) minute!: RateLimitWindow;
  @ApiProperty({ type: RateLimitWindow }) day!: RateLimitWindow;
  @ApiProperty() banned!: boolean;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Seconds left on a ban' }) banSecondsLeft!:
    number | null;
}

const view = (w: WindowState): RateLimitWindow => ({
  name: w.name,
  limit: w.limit,
  used: w.used,
  remaining: w.remaining,
  reset: Math.ceil(w.resetAtMs / 1000),
});

/** Polling the limits spends none of the account's, but is itself limited per key. */
const RATE_LIMIT_BUDGET: OwnBudget = { name: 'rate_limit', perMinute: 120, perDay: 20_000 };

@ApiTags('Account')
@Controller('rate_limit')
export class RateLimitController {
  @Get()
  @Policy({ scope: 'any', metering: RATE_LIMIT_BUDGET })
  @ApiOperation({
    operationId: 'getRateLimit',
    summary: 'Both windows and any ban of the calling key; does not count',
    description:
      'The state of both windows (minute and day) of the calling key and any temporary ban. This call is not counted against the limits, so it is safe to poll before a burst.',
  })
  @ApiOkResponse({ type: RateLimitStatus })
  status(@Res({ passthrough: true }) res: Response): RateLimitStatus {
    const d = res.locals.rateLimit as RateLimitDecision;
    const banned = d.outcome === 'banned';
    return {
      minute: view(d.minute),
      day: view(d.day),
      banned,
      banSecondsLeft: banned ? (d.retryAfterSeconds ?? null) : null,
    };
  }
}
