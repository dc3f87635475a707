import { ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import type { FeedOrder } from '@app/database';
import { IsOptional } from '@app/errors';
import type { FastifyReply } from 'fastify';

export const MAX_PAGE_SIZE = 100;

export const LINK_HEADER = {
  Link: { description: 'The next page: `<...>; rel="next"`', schema: { type: 'string' } },
};
const MAX_ID = Number.MAX_SAFE_INTEGER;

/** `0x10`, `1e3`, ` 7` become NaN so validation names them. */
export const IntParam = () =>
  Transform(({ value }) =>
    typeof value === 'string' ? (/^(0|[1-9][0-9]{0,15})$/.test(value) ? Number(value) : NaN) : value,
  );

export class PageLimit {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: 20 })
  @IntParam()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit: number = 20;
}

/** Filters extend this class. */
export class PageQuery extends PageLimit {
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    description: 'The last id of the previous page; the next page starts after it',
  })
  @IsOptional()
  @IntParam()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  after?: number;
}

const FEED_ORDERS: FeedOrder[] = ['oldest', 'newest'];

export class FeedOrderQuery {
  @ApiPropertyOptional({
    enum: FEED_ORDERS,
    default: 'oldest',
    description: '`newest` lists the latest first (what a dashboard wants); `after` then continues towards older ones',
  })
  @IsOptional()
  @IsIn(FEED_ORDERS)
  order?: FeedOrder;
}

export class FeedQuery extends IntersectionType(PageQuery, FeedOrderQuery) {}

/** Above 2^53-1 Number would round, so that becomes NaN too. */
export const CommaSeparatedIds = () =>
  Transform(({ value }) =>
    typeof value === 'string'
      ? value.split(',').map((s) => (/^[1-9][0-9]{0,15}$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : NaN))
      : value,
  );

export const BooleanParam = () =>
  Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value));

/** Cuts the `limit + 1` rows to a page and links the next with the same filters and limit. */
export function page<T>(
  res: FastifyReply,
  path: string,
  query: PageLimit & { after?: number | string },
  rows: T[],
  cursorOf: (row: T) => number | string = (row) => (row as { id: number | string }).id,
): T[] {
  if (rows.length <= query.limit) return rows;
  const items = rows.slice(0, query.limit);
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || key === 'after') continue;
    params.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  params.set('after', String(cursorOf(items[items.length - 1])));
  res.header('Link', `<${path}?${params.toString().replaceAll('%2C', ',')}>; rel="next"`);
  return items;
}
