import { Controller, Get, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RateLimitDecision, WindowState } from '@app/access';
import { OwnBudget, Policy } from '../policy/route-policy.decorator';
import { RateLimitStatus, RateLimitWindow } from './rate-limit.dto';
import { GetRateLimitDocs } from './rate-limit.openapi';

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
  @GetRateLimitDocs()
  status(@Res({ passthrough: true }) res: FastifyReply): RateLimitStatus {
    const d = res.request.rateLimit as RateLimitDecision;
    const banned = d.outcome === 'banned';
    return {
      minute: view(d.minute),
      day: view(d.day),
      banned,
      banSecondsLeft: banned ? (d.retryAfterSeconds ?? null) : null,
    };
  }
}
