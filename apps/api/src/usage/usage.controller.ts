import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ApiKeysService, AuthContext, limitsFor } from '@app/access';
import { Clock } from '@app/config';
import { ApiError, DATE_TIME_MAX, DATE_TIME_MIN, DATE_TIME_RANGE_MESSAGE, parseDateTime } from '@app/errors';
import { bucketStart, GRANULARITY_MS, UsageHistoryService } from '@app/usage';
import { Auth } from '../gate/auth.decorator';
import { MAX_BUCKETS, UsageQueryDto, UsageSchema } from './usage.dto';
import { OwnBudget, Policy } from '../policy/route-policy.decorator';
import { GetUsageDocs } from './usage.openapi';

const thousands = (n: number) => n.toLocaleString('en-US');
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
    const size = GRANULARITY_MS[query.granularity];
    const to = query.to ? parseDateTime(query.to)!.getTime() : this.clock.nowMs();
    const from = query.from ? parseDateTime(query.from)!.getTime() : to - DEFAULT_SPAN[query.granularity];
    if (from >= to) throw invalidRange('from', 'must be before `to`');
    // The answer writes both ends, rounded to buckets, as RFC 3339 date-times: years 0000-9999 only.
    if (bucketStart(from, query.granularity) < Date.parse(DATE_TIME_MIN))
      throw invalidRange(
        'from',
        `${DATE_TIME_RANGE_MESSAGE} once rounded down to its bucket (default: \`to\` minus the span)`,
      );
    if (Math.ceil(to / size) * size > Date.parse(DATE_TIME_MAX))
      throw invalidRange('to', `${DATE_TIME_RANGE_MESSAGE} once rounded up to a bucket boundary`);
    const buckets = Math.ceil((to - bucketStart(from, query.granularity)) / size);
    if (buckets > MAX_BUCKETS)
      throw invalidRange(
        'from',
        `the range from \`from\` to \`to\` must hold at most ${thousands(MAX_BUCKETS)} buckets of the granularity ` +
          `(${query.granularity}); it holds ${thousands(buckets)}`,
      );
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
      to: new Date(Math.ceil(to / size) * size).toISOString(),
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
  new ApiError('invalid_range', `${field}: ${message}`, [{ field: `query.${field}`, message }]);
