import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiKeysService, AuthContext, limitsFor } from '@app/access';
import { Clock } from '@app/config';
import { ApiError } from '@app/errors';
import { bucketStart, GRANULARITY_MS, UsageHistoryService } from '@app/usage';
import { Auth } from '../gate/auth.decorator';
import { UsageQueryDto, UsageSchema } from './usage.dto';
import { OwnBudget, Policy } from '../policy/route-policy.decorator';
import { GetUsageDocs } from './usage.openapi';

/** Buckets one answer may hold: a day of minutes, two months of hours, four years of days. */
export const MAX_BUCKETS = 1_500;
const DEFAULT_SPAN = { minute: 3_600_000, hour: 86_400_000, day: 30 * 86_400_000 };
/** One call reads up to 90 days: a budget of its own per key, not the account's. */
const USAGE_BUDGET: OwnBudget = { name: 'usage', perMinute: 30, perDay: 2_000 };

@ApiTags('Account')
@Controller('usage')
export class UsageController {
  constructor(
    private readonly usage: UsageHistoryService,
    private readonly keys: ApiKeysService,
    private readonly clock: Clock,
  ) {}

  @Get()
  @Policy({ scope: 'any', metering: USAGE_BUDGET, stability: 'experimental' })
  @GetUsageDocs()
  async get(@Auth() auth: AuthContext, @Query() query: UsageQueryDto): Promise<UsageSchema> {
    const to = query.to ? Date.parse(query.to) : this.clock.nowMs();
    const from = query.from ? Date.parse(query.from) : to - DEFAULT_SPAN[query.granularity];
    if (from >= to) throw invalidRange('from', 'must be before `to`');
    const buckets = Math.ceil((to - bucketStart(from, query.granularity)) / GRANULARITY_MS[query.granularity]);
    if (buckets > MAX_BUCKETS) throw invalidRange('from', `the range holds ${buckets} buckets; at most ${MAX_BUCKETS}`);
    if (query.keyId !== undefined && !(await this.keys.belongsTo(auth.accountId, query.keyId)))
      throw ApiError.notFound('API key');
    const history = await this.usage.history(auth.accountId, {
      fromMs: from,
      toMs: to,
      granularity: query.granularity,
      keyId: query.keyId,
    });
    return {
      granularity: query.granularity,
      from: new Date(history[0]?.startMs ?? from).toISOString(),
      to: new Date(Math.ceil(to / GRANULARITY_MS[query.granularity]) * GRANULARITY_MS[query.granularity]).toISOString(),
      keyId: query.keyId ?? null,
      plan: auth.plan,
      limits: limitsFor(auth),
      buckets: history.map(({ startMs, admitted, refused, bans }) => ({
        start: new Date(startMs).toISOString(),
        admitted,
        refused,
        bans,
      })),
    };
  }
}

/** Each parameter is valid, their combination is not (OpenAPI cannot say so): 422, not 400. */
const invalidRange = (field: string, message: string) =>
  new ApiError('invalid_range', `${field} ${message}`, [{ field: `query.${field}`, message }]);
